// The registration cache: registrations of application buffers kept after their rendezvous, so a
// buffer sent from or received into again costs no ibv_reg_mr/ibv_dereg_mr. Safe because the
// memory monitor (mem_monitor.hpp) drops every entry whose pages go away before the application
// can reuse the address. Without a monitor (no userfaultfd here) or with BRAID_VERBS_RCACHE=off
// nothing is cached and every rendezvous registers its buffer for itself, as before.
//
// Entries cover whole pages, registered with LOCAL_WRITE | REMOTE_READ so one entry serves sends
// and receives (and pinning for write gives the buffer pages of its own: a read-only pin could
// share the zero page, which a later write replaces). Memory that cannot be registered writable
// (read-only data) or watched (file mappings) is not cached. The cache is bounded in entries and
// pinned bytes; idle entries go least recently used first, and all idle ones when a registration
// fails for locked memory.
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
  uintptr_t start = 0, end = 0;  // page aligned
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

  // `monitor` from MemMonitor::acquire; the cache takes over that reference.
  RegCache(ibv_pd *pd, MemMonitor *monitor, Limits limits);
  ~RegCache();  // every entry must be released; deregisters them and releases the monitor

  // An entry covering [addr, addr + bytes), or nullptr when this memory is not cached: it cannot
  // be registered writable or watched, or locked memory ran out with every idle entry dropped.
  // The caller then registers it for the one rendezvous, which reports any error.
  CachedReg *acquire(void *addr, size_t bytes);
  static void release(CachedReg *entry);

  RegCacheStats stats();

  RegCache(const RegCache &) = delete;
  RegCache &operator=(const RegCache &) = delete;

 private:
  static void on_invalidate(void *self, uintptr_t start, uintptr_t end);
  static bool covers(void *self, uintptr_t start, uintptr_t end);
  void drop(size_t index, bool unwatch);  // monitor mutex held
  // Drops least recently used idle entries until `entries` more entries and `bytes` more bytes
  // fit the limits (SIZE_MAX: every idle entry). Monitor mutex held.
  void evict_idle(size_t entries, size_t bytes);

  ibv_pd *pd_;
  MemMonitor *monitor_;
  Limits limits_;
  std::vector<CachedReg *> live_;  // few hundred at most: a linear scan beats a tree here
  size_t bytes_ = 0;
  uint64_t clock_ = 0;
  RegCacheStats stats_;
};

}  // namespace braid::verbs
