// Tells a registration cache when the pages behind an address range go away, through a
// userfaultfd (the kernel's, not a hook in the C library): munmap (also MAP_FIXED over a mapping,
// a shrinking brk or mremap), an mremap that moves the range, and madvise(DONTNEED, REMOVE,
// FREE). Those are every way a cached registration can come to point at pages the address no
// longer maps. libfabric's uffd monitor works the same way; UCX patches the C library instead,
// which misses the munmap calls glibc makes internally (free of large blocks).
//
// How it stays race free: the kernel holds a thread that unmaps a watched range until the event
// is read, and the monitor thread reads events only while it holds mutex(), which it keeps until
// every subscriber has dropped what overlaps them. A cache that looks up under mutex() therefore
// never sees an entry for pages that a returned munmap has already taken away.
//
// One monitor per process (a userfaultfd is per address space and a range can be registered with
// only one); every verbs context of the process subscribes to it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace braid::verbs {

// Faults in, from this thread, the missing pages of [addr, addr + bytes) before a registration
// pins them. A missing page in a watched mapping (grown in place by mremap, or left watched by
// an entry that covered part of it) raises a userfault, which the monitor resolves; but the
// long-term pinning behind ibv_reg_mr cannot wait for it on kernels before 6.3 (its slow path
// gives no FAULT_FLAG_ALLOW_RETRY): the fault then ends in SIGBUS inside the kernel and the
// registration fails with EFAULT. MADV_POPULATE_READ faults the ordinary way. Best effort: a
// kernel without it (before 5.14) or an unreadable range leaves the registration to fail as
// before, with the error it reports.
void fault_in_for_pinning(void *addr, size_t bytes);

// Why a registration cache must stay off under this fork status (ibv_is_fork_initialized), or
// null. Only a kernel that copies pinned pages at fork (IBV_FORK_UNNEEDED, Linux 5.13 on) keeps
// a cached registration right after the process forks: elsewhere the parent's next write to a
// pinned page gives the parent a new page while the registration keeps the old one, now the
// child's, and copy-on-write raises no event the monitor could see. With IBV_FORK_ENABLED
// (RDMAV_FORK_SAFE) cached heap pages would be MADV_DONTFORK, and a child touching malloc'd data
// on them would crash.
const char *fork_keeps_cache_off(int fork_status);

class MemMonitor {
 public:
  // Called with mutex() held, from the monitor thread, for every range whose pages went away.
  using Invalidate = void (*)(void *owner, uintptr_t start, uintptr_t end);
  // Called with mutex() held: whether the owner still has an entry overlapping [start, end),
  // and then, of those entries, the one that starts first, clipped to the range ([*first,
  // *last)). No allocation: a fault on a watched heap page would wait for this lock.
  using Covers = bool (*)(void *owner, uintptr_t start, uintptr_t end, uintptr_t *first,
                          uintptr_t *last);

  // The process's monitor, started on first use; nullptr when userfaultfd is not available here
  // (*why says why: permissions, kernel without it), in which case nothing may be cached.
  static MemMonitor *acquire(std::string *why);
  // Drops one reference; the last one stops the thread and closes the userfaultfd.
  static void release(MemMonitor *monitor);

  // Starts watching [start, end) (page aligned). False when the mapping cannot be watched (a file
  // mapping, memory another userfaultfd watches): such memory must not be cached. Call with
  // mutex() held, after the range is registered (its pages are then present).
  bool watch(uintptr_t start, uintptr_t end);
  // Stops watching the parts of [start, end) that no subscriber's entry overlaps (every verbs
  // context of the process has its own cache over the one monitor). mutex() held.
  void unwatch_unused(uintptr_t start, uintptr_t end);

  void subscribe(void *owner, Invalidate invalidate, Covers covers);  // mutex() held
  void unsubscribe(void *owner);                                      // mutex() held

  std::mutex &mutex() { return mutex_; }
  uint64_t events() const { return events_; }  // read with mutex() held

  MemMonitor(const MemMonitor &) = delete;
  MemMonitor &operator=(const MemMonitor &) = delete;

 private:
  static void forget_in_child();  // pthread_atfork child handler
  MemMonitor(int uffd, int stop_fd);
  ~MemMonitor();
  void run();
  void handle(const void *msg);
  void invalidate(uintptr_t start, uintptr_t end);
  void unwatch(uintptr_t start, uintptr_t end);

  struct Subscriber {
    void *owner;
    Invalidate invalidate;
    Covers covers;
  };

  int uffd_;
  int stop_fd_;  // an eventfd written to stop the thread
  std::mutex mutex_;
  std::vector<Subscriber> subscribers_;
  uint64_t events_ = 0;
  int refs_ = 0;  // guarded by the process-wide lock in acquire/release
  std::thread thread_;
};

}  // namespace braid::verbs
