// Every region braid allocated on a NUMA node (braid_mem_alloc's and the scratch pools'), so
// a send or receive from inside one can use a registration made once per communicator instead
// of one per call. Process-wide: a region outlives no communicator in particular.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace braid::detail {

struct Region {
  char *base = nullptr;
  size_t bytes = 0;
  int node = -1;      // NUMA node the pages are bound to, -1 unbound
  bool user = false;  // from braid_mem_alloc (only those may be braid_mem_free'd)
  uint64_t id = 0;    // unique per allocation, so a later region at the same address differs
  int fd = -1;        // the memfd behind a user region, which node peers may map; else -1
};

class RegionRegistry {
 public:
  static RegionRegistry &instance();

  // Allocates bytes on `node` (-1: unbound) and records the region. Returns nullopt when the
  // memory cannot be mapped. User regions are backed by a memfd (see alloc_shared_on_node), so
  // the node-local collectives can work on them in place.
  std::optional<Region> allocate(size_t bytes, int node, bool user);
  // Tells every listener the region is going away, then unmaps it. False if `base` is not the
  // start of a region.
  bool release(void *base, bool user_only);

  // The region holding all of [addr, addr + bytes), if any.
  std::optional<Region> find(const void *addr, size_t bytes) const;
  std::optional<Region> at(const void *base) const;
  size_t count() const;

  // Listeners (one per communicator's registration cache) are called under the registry lock
  // when a region is released, before its memory is unmapped.
  using Listener = std::function<void(const Region &)>;
  uint64_t subscribe(Listener listener);
  void unsubscribe(uint64_t token);

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, Region> regions_;  // by base address
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_id_ = 1;
};

}  // namespace braid::detail
