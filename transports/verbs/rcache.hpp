// The registration cache: registrations of application buffers kept after their rendezvous, so a
// buffer sent from or received into again costs no ibv_reg_mr/ibv_dereg_mr. Safe because the
// memory monitor (mem_monitor.hpp) drops every entry whose pages go away before the application
// can reuse the address. Without a monitor (no userfaultfd here) or with BRAID_VERBS_RCACHE=off
// nothing is cached and every rendezvous registers its buffer for itself, as before.
//
// Entries cover whole pages, registered with LOCAL_WRITE | REMOTE_READ (and REMOTE_WRITE when
// receives are advertised, direct.hpp) so one entry serves sends and receives (and pinning for
// write gives the buffer pages of its own: a read-only pin could share the zero page, which a later
// write replaces). Only private anonymous memory is cached (heap, stacks, anonymous mmap): shared
// memory can lose its pages to another process's truncate or hole punch, which no event of ours
// reports; read-only memory cannot be registered writable. The cache is bounded in entries and
// pinned bytes; idle entries go least recently used first, and all idle ones when a registration
// fails for locked memory.
//
// Nothing is allocated, freed or deregistered while the monitor's lock is held or on the monitor
// thread: freeing can make the C library unmap or madvise memory, and if that memory is watched
// the kernel holds the call until the monitor reads the event, which it cannot do then. Entries
// the monitor drops go on a list that the owning thread deregisters and frees later.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace braid::verbs {

class MemMonitor;
class RegCache;

struct CachedReg {
  RegCache *cache = nullptr;
  CachedReg *next_dead = nullptr;  // on the cache's list of entries to deregister
  uintptr_t start = 0, end = 0;    // page aligned
  ibv_mr *mr = nullptr;
  uint32_t refs = 0;   // rendezvous using it now
  bool stale = false;  // its pages went away while in use: deregistered on the last release
  uint64_t last_use = 0;
};

struct RegCacheStats {
  uint64_t hits = 0, misses = 0, invalidated = 0, evicted = 0, uncacheable = 0;
  uint64_t entries = 0, bytes = 0;
};

class RegCache {
 public:
  struct Limits {
    size_t max_entries = 256;
    size_t max_bytes = size_t{1} << 30;
  };

  // `monitor` from MemMonitor::acquire; the cache takes over that reference. `remote_write`:
  // entries also take RDMA WRITEs (advertised receives, direct.hpp).
  RegCache(ibv_pd *pd, MemMonitor *monitor, Limits limits, bool remote_write);
  ~RegCache();  // every entry must be released; deregisters them and releases the monitor

  // An entry covering [addr, addr + bytes), or nullptr when this memory is not cached: it cannot
  // be registered writable or watched, or locked memory ran out with every idle entry dropped.
  // The caller then registers it for the one rendezvous, which reports any error.
  CachedReg *acquire(void *addr, size_t bytes);
  // Ends one rendezvous's use. `revoke` (a cancelled or failed request, whose buffer the
  // application may reuse at once) also drops the entry, so that no peer can still read or
  // write the buffer through its key once the last use ends.
  static void release(CachedReg *entry, bool revoke = false);

  RegCacheStats stats();

  RegCache(const RegCache &) = delete;
  RegCache &operator=(const RegCache &) = delete;

 private:
  static void on_invalidate(void *self, uintptr_t start, uintptr_t end);
  static bool covers(void *self, uintptr_t start, uintptr_t end, uintptr_t *first, uintptr_t *last);
  void drop(size_t index);  // monitor mutex held: out of live_, onto the dead list when idle
  void reap();              // deregisters and frees the dead list; monitor mutex NOT held
  CachedReg *take_dead();   // monitor mutex held: empties the dead list, returns it
  static void free_dead(CachedReg *list);  // deregisters and frees; monitor mutex NOT held
  // Drops least recently used idle entries until `entries` more entries and `bytes` more bytes
  // fit the limits (SIZE_MAX: every idle entry). Monitor mutex held.
  void evict_idle(size_t entries, size_t bytes);

  ibv_pd *pd_;
  MemMonitor *monitor_;
  Limits limits_;
  int access_;
  std::vector<CachedReg *> live_;  // few hundred at most: a linear scan beats a tree here
  size_t live_capacity_;           // reserved up front: push_back never allocates under the lock
  CachedReg *dead_ = nullptr;      // dropped and idle: to deregister outside the lock
  size_t bytes_ = 0;
  uint64_t clock_ = 0;
  RegCacheStats stats_;
};

}  // namespace braid::verbs
