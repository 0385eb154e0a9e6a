// One communicator's transport registrations of braid-allocated regions (region_registry.hpp):
// made on the first send or receive that touches a region, reused by every later one, and
// dropped when the region is freed or the communicator goes away.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "memory/region_registry.hpp"

namespace braid::detail {

class RegistrationCache {
 public:
  // reg returns the registration handle (nullptr when registration failed: the region is then
  // used unregistered, as the transport allows). dereg releases one handle.
  using Reg = std::function<void *(void *addr, size_t bytes)>;
  using Dereg = std::function<void(void *mr)>;

  RegistrationCache(RegionRegistry &registry, Reg reg, Dereg dereg);
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache &) = delete;
  RegistrationCache &operator=(const RegistrationCache &) = delete;

  // The registration covering [buf, buf + bytes), registering its region on first use;
  // nullptr when the buffer is not inside one braid region.
  void *lookup(const void *buf, size_t bytes);

  size_t registrations_made() const { return made_; }
  size_t live() const;

 private:
  void forget(const Region &region);

  RegionRegistry &registry_;
  Reg reg_;
  Dereg dereg_;
  uint64_t token_;
  mutable std::mutex mutex_;
  std::map<uint64_t, void *> mrs_;  // region id -> handle (nullptr: registration failed)
  size_t made_ = 0;
};

}  // namespace braid::detail
