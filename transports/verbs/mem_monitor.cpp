#include "mem_monitor.hpp"

#include "proc_maps.hpp"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace braid::verbs {
namespace {

std::mutex g_lock;  // guards g_monitor and its refs_
MemMonitor *g_monitor = nullptr;
std::once_flag g_atfork;

uintptr_t page_size() {
  static const uintptr_t size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// A userfaultfd: the system call where unprivileged use is allowed or we may, else
// /dev/userfaultfd (Linux 6.1+, whose permissions the administrator sets).
int open_uffd(std::string *why) {
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd >= 0) return fd;
  int first = errno;
#ifdef USERFAULTFD_IOC_NEW
  int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
  if (dev >= 0) {
    fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
    int e = errno;
    close(dev);
    if (fd >= 0) return fd;
    errno = e;
  }
#endif
  *why = std::string("userfaultfd: ") + std::strerror(first) +
         (first == EPERM ? " (unprivileged use is off: sysctl vm.unprivileged_userfaultfd=1, or "
                           "give the user access to /dev/userfaultfd)"
                         : "");
  return -1;
}

}  // namespace

void fault_in_for_pinning(void *addr, size_t bytes) {
  const uintptr_t page = page_size();
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + bytes + page - 1) & ~(page - 1);
  if (end > start) (void)madvise(reinterpret_cast<void *>(start), end - start, MADV_POPULATE_READ);
}

const char *fork_keeps_cache_off(int fork_status) {
  switch (fork_status) {
    case IBV_FORK_UNNEEDED:
      return nullptr;
    case IBV_FORK_ENABLED:
      return "fork: RDMAV_FORK_SAFE/ibv_fork_init is on (cached pages would be hidden from "
             "forked children)";
    default:
      return "fork: this kernel does not copy pinned pages at fork (Linux 5.13 does), so a "
             "cached registration could keep pages a fork gave away";
  }
}

MemMonitor *MemMonitor::acquire(std::string *why) {
  std::lock_guard<std::mutex> guard(g_lock);
  if (g_monitor != nullptr) {
    ++g_monitor->refs_;
    return g_monitor;
  }
  int uffd = open_uffd(why);
  if (uffd < 0) return nullptr;
  uffdio_api api{};
  api.api = UFFD_API;
  const uint64_t needed =
      UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;
  api.features = needed;
  if (ioctl(uffd, UFFDIO_API, &api) != 0 || (api.features & needed) != needed) {
    *why = std::string("userfaultfd: the kernel does not report unmap, remove and remap events (") +
           std::strerror(errno) + ")";
    close(uffd);
    return nullptr;
  }
  int stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop < 0) {
    *why = std::string("eventfd: ") + std::strerror(errno);
    close(uffd);
    return nullptr;
  }
  std::call_once(g_atfork, [] { pthread_atfork(nullptr, nullptr, &MemMonitor::forget_in_child); });
  g_monitor = new MemMonitor(uffd, stop);
  g_monitor->refs_ = 1;
  return g_monitor;
}

void MemMonitor::forget_in_child() {
  // The child has no monitor thread and its mappings are not watched (no UFFD_FEATURE_EVENT_FORK).
  // Its copy of the userfaultfd would keep the parent's watch alive after the parent closes
  // its own, and a later munmap in the parent would then wait for a reader forever: close it.
  // The parent's objects are abandoned (their locks may have been held by threads that do not
  // exist here); a context the child opens gets a monitor of its own.
  if (g_monitor != nullptr) {
    close(g_monitor->uffd_);
    close(g_monitor->stop_fd_);
    g_monitor = nullptr;
  }
  new (&g_lock) std::mutex;
}

void MemMonitor::release(MemMonitor *monitor) {
  if (monitor == nullptr) return;
  std::lock_guard<std::mutex> guard(g_lock);
  if (--monitor->refs_ > 0) return;
  g_monitor = nullptr;
  delete monitor;
}

MemMonitor::MemMonitor(int uffd, int stop_fd) : uffd_(uffd), stop_fd_(stop_fd) {
  // The thread blocks every signal (it inherits the creator's mask): the application's handlers
  // must not run on a thread it does not know of.
  subscribers_.reserve(64);  // subscribe allocates under the lock only past 64 contexts
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

MemMonitor::~MemMonitor() {
  uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof one) < 0) {
    // An eventfd write fails only when its counter would overflow; the thread is stopping anyway.
  }
  thread_.join();
  // Closing the userfaultfd drops every range it watches and wakes any fault still pending.
  close(uffd_);
  close(stop_fd_);
}

bool MemMonitor::watch(uintptr_t start, uintptr_t end) {
  uffdio_register reg{};
  reg.range.start = start;
  reg.range.len = end - start;
  reg.mode = UFFDIO_REGISTER_MODE_MISSING;
  return ioctl(uffd_, UFFDIO_REGISTER, &reg) == 0;
}

void MemMonitor::unwatch(uintptr_t start, uintptr_t end) {
  uffdio_range range{start, end - start};
  // Fails harmlessly when the range is unmapped by now.
  (void)ioctl(uffd_, UFFDIO_UNREGISTER, &range);
}

void MemMonitor::unwatch_unused(uintptr_t start, uintptr_t end) {
  // Piece by piece: entries that overlap (two buffers sharing a page) keep only what they
  // cover watched, not the whole range; all or nothing left the rest watched with no entry,
  // its mapping split for nothing, for good.
  for (uintptr_t at = start; at < end;) {
    uintptr_t first = end, last = end;
    for (const Subscriber &s : subscribers_) {
      uintptr_t f = end, l = end;
      if (s.covers(s.owner, at, end, &f, &l) && (f < first || (f == first && l > last))) {
        first = f;
        last = l;
      }
    }
    if (at < first) unwatch(at, first);
    at = std::max(first, last);
  }
}

void MemMonitor::subscribe(void *owner, Invalidate invalidate, Covers covers) {
  subscribers_.push_back({owner, invalidate, covers});
}

void MemMonitor::unsubscribe(void *owner) {
  std::erase_if(subscribers_, [owner](const Subscriber &s) { return s.owner == owner; });
}

void MemMonitor::invalidate(uintptr_t start, uintptr_t end) {
  ++events_;
  for (const Subscriber &s : subscribers_) s.invalidate(s.owner, start, end);
}

void MemMonitor::handle(const void *raw) {
  const auto *msg = static_cast<const uffd_msg *>(raw);
  const uintptr_t page = page_size();
  switch (msg->event) {
    case UFFD_EVENT_UNMAP:
      invalidate(msg->arg.remove.start, msg->arg.remove.end);
      break;
    case UFFD_EVENT_REMOVE:
      invalidate(msg->arg.remove.start, msg->arg.remove.end);
      // The pages are being dropped: a later touch must fault in fresh pages the ordinary way,
      // not wait for this monitor.
      unwatch(msg->arg.remove.start, msg->arg.remove.end);
      break;
    case UFFD_EVENT_REMAP:
      invalidate(msg->arg.remap.from, msg->arg.remap.from + msg->arg.remap.len);
      // The moved mapping keeps its registration; nothing of ours is cached there.
      unwatch_unused(msg->arg.remap.to, msg->arg.remap.to + msg->arg.remap.len);
      break;
    case UFFD_EVENT_PAGEFAULT: {
      // A watched mapping has a missing page: it grew in place (mremap, a stack) or lost a page
      // without an event. Whatever is cached in it is suspect; stop watching the whole mapping
      // (page by page, a large grown buffer would split into a mapping per page) and let the
      // fault proceed the ordinary way.
      uintptr_t fault = msg->arg.pagefault.address & ~(page - 1);
      Mapping m;
      if (!mapping_at(fault, &m)) m = Mapping{fault, fault + page, false};
      invalidate(m.start, m.end);
      unwatch(m.start, m.end);
      uffdio_range range{fault, page};
      (void)ioctl(uffd_, UFFDIO_WAKE, &range);
      break;
    }
    default:
      break;
  }
}

void MemMonitor::run() {
  for (;;) {
    pollfd fds[2] = {{uffd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      // Never give up while ranges are watched: their munmaps would wait for a reader forever.
      if (errno != EINTR) usleep(1000);
      continue;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    // Read and invalidate under the lock: the unmapping thread resumes as soon as its event is
    // read, and a lookup it makes next must already miss.
    std::lock_guard<std::mutex> guard(mutex_);
    uffd_msg msgs[16];
    for (;;) {
      ssize_t n = read(uffd_, msgs, sizeof msgs);
      if (n <= 0) break;
      for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(uffd_msg); ++i) handle(&msgs[i]);
    }
  }
}

}  // namespace braid::verbs
