// Buffers the ranks of a node can all map: those inside braid_mem_alloc regions, which are
// backed by a memfd (src/memory/node_memory.hpp). A rank describes such a buffer by its file
// descriptor, region and offset (SharedRef); a peer opens /proc/<pid>/fd/<fd> and maps the whole
// region once, so later collectives on the same buffers read and write it in place
// (zero-copy, see direct.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::coll {

struct SharedRef {
  // fd of a buffer peers read through CMA (single_copy.hpp)
  static constexpr int32_t kCma = -2;
  int32_t fd = -1;      // in the owner's process; -1: the buffer is not shareable
  uint32_t region = 0;  // the owner's region id (low bits): tells a reused fd number apart
  uint64_t offset = 0;  // of the buffer in the region; with kCma, its address in the owner
  bool valid() const { return fd >= 0; }  // peers can map it
  bool cma() const { return fd == kCma; }
  bool readable() const { return valid() || cma(); }
};
static_assert(sizeof(SharedRef) == 16);

// The reference of [p, p + bytes) when it lies inside one braid_mem_alloc region, else invalid.
SharedRef shared_ref(const void *p, size_t bytes);

// This rank's mappings of its node peers' regions, a few per peer, least recently used evicted.
class PeerMappings {
 public:
  explicit PeerMappings(int local_size) : peers_(static_cast<size_t>(local_size)) {}
  PeerMappings(const PeerMappings &) = delete;
  PeerMappings &operator=(const PeerMappings &) = delete;
  ~PeerMappings();

  // Where peer `local`'s buffer of `bytes` at `ref` is in this process, or null when it cannot
  // be mapped (no permission to open the peer's fd, the region is smaller than it says, ...).
  char *map(int local, int pid, SharedRef ref, size_t bytes);
  size_t mapped() const;

 private:
  // A region stays mapped after its owner frees it, until evicted: one collective on a
  // buffer is usually followed by many more on the same one.
  static constexpr size_t kPerPeer = 8;
  struct Mapping {
    int32_t fd;
    uint32_t region;
    char *base;
    size_t bytes;
    uint64_t last_use;
  };
  std::vector<std::vector<Mapping>> peers_;
  uint64_t uses_ = 0;
};

}  // namespace braid::coll
