// The registration cache's memory monitor on a real userfaultfd (no device needed): every way
// the pages behind a watched range go away is reported before the call that took them returns,
// and memory that is not watched, or that fork copies, is not reported.
#include <gtest/gtest.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <infiniband/verbs.h>

#include "mem_monitor.hpp"
#include "proc_maps.hpp"

namespace braid::verbs {
namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

// A file of one page, already unlinked (its descriptor keeps it).
int one_page_file() {
  char path[] = "/tmp/braid-mem-monitor-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  if (ftruncate(fd, static_cast<off_t>(kPage)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class MemMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    monitor_ = MemMonitor::acquire(&why);
    // CI and the guests run as root, where userfaultfd is always there; a user without it
    // gets the reason the cache is off.
    if (monitor_ == nullptr) GTEST_SKIP() << "no userfaultfd here: " << why;
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    monitor_->subscribe(this, &MemMonitorTest::record, &MemMonitorTest::covers);
  }
  void TearDown() override {
    if (monitor_ == nullptr) return;
    {
      std::lock_guard<std::mutex> guard(monitor_->mutex());
      monitor_->unsubscribe(this);
    }
    MemMonitor::release(monitor_);
  }

  static void record(void *self, uintptr_t start, uintptr_t end) {
    static_cast<MemMonitorTest *>(self)->seen_.emplace_back(start, end);
  }
  static bool covers(void *self, uintptr_t start, uintptr_t end, uintptr_t *first,
                     uintptr_t *last) {
    bool any = false;
    for (auto [s, e] : static_cast<MemMonitorTest *>(self)->held_) {
      if (!(s < end && start < e)) continue;
      const uintptr_t f = std::max(s, start), l = std::min(e, end);
      if (!any || f < *first) {
        *first = f;
        *last = l;
      }
      any = true;
    }
    return any;
  }

  // Maps and touches `pages` pages (a registration's pages are always present) and watches them.
  uint8_t *mapped_and_watched(size_t pages) {
    void *p =
        mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    std::memset(p, 0x5a, pages * kPage);
    watch(p, pages);
    return static_cast<uint8_t *>(p);
  }
  void watch(void *p, size_t pages) {
    auto start = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    ASSERT_TRUE(monitor_->watch(start, start + pages * kPage));
  }

  // What was reported, read under the monitor's lock: by then an event for a call that returned
  // has been handled (the kernel held the call until the monitor read it, under that lock).
  std::vector<std::pair<uintptr_t, uintptr_t>> seen() {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    return seen_;
  }
  bool reported(const void *p, size_t pages) {
    auto start = reinterpret_cast<uintptr_t>(p);
    for (auto [s, e] : seen())
      if (s <= start && start + pages * kPage <= e) return true;
    return false;
  }

  MemMonitor *monitor_ = nullptr;
  std::vector<std::pair<uintptr_t, uintptr_t>> seen_;
  std::vector<std::pair<uintptr_t, uintptr_t>> held_;  // what covers() reports as still in use
};

TEST_F(MemMonitorTest, MunmapIsReportedBeforeItReturns) {
  uint8_t *p = mapped_and_watched(4);
  munmap(p, 4 * kPage);
  EXPECT_TRUE(reported(p, 4));
}

TEST_F(MemMonitorTest, UnmappingOnePageReportsThatPage) {
  uint8_t *p = mapped_and_watched(3);
  munmap(p + kPage, kPage);
  auto events = seen();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].first, reinterpret_cast<uintptr_t>(p + kPage));
  EXPECT_EQ(events[0].second, reinterpret_cast<uintptr_t>(p + 2 * kPage));
  munmap(p, kPage);
  munmap(p + 2 * kPage, kPage);
}

TEST_F(MemMonitorTest, MapFixedOverAWatchedRangeIsReported) {
  uint8_t *p = mapped_and_watched(2);
  void *q =
      mmap(p, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(q, p);
  EXPECT_TRUE(reported(p, 2));
  munmap(p, 2 * kPage);
}

TEST_F(MemMonitorTest, DontneedIsReportedAndThePagesFaultInAgainWithoutTheMonitor) {
  uint8_t *p = mapped_and_watched(2);
  ASSERT_EQ(madvise(p, 2 * kPage, MADV_DONTNEED), 0);
  EXPECT_TRUE(reported(p, 2));
  // Fresh zero pages, faulted in the ordinary way (the range is no longer watched).
  EXPECT_EQ(p[0], 0);
  p[kPage] = 7;
  EXPECT_EQ(p[kPage], 7);
  munmap(p, 2 * kPage);
}

TEST_F(MemMonitorTest, MremapThatMovesIsReported) {
  uint8_t *p = mapped_and_watched(2);
  void *to = mremap(p, 2 * kPage, 8 * kPage, MREMAP_MAYMOVE);
  ASSERT_NE(to, MAP_FAILED);
  if (to != p) {
    EXPECT_TRUE(reported(p, 2));
  }
  // The pages moved with their contents.
  EXPECT_EQ(static_cast<uint8_t *>(to)[kPage], 0x5a);
  munmap(to, 8 * kPage);
}

TEST_F(MemMonitorTest, MremapShrinkReportsTheTail) {
  uint8_t *p = mapped_and_watched(4);
  ASSERT_EQ(mremap(p, 4 * kPage, 2 * kPage, 0), p);
  EXPECT_TRUE(reported(p + 2 * kPage, 2));
  EXPECT_FALSE(reported(p, 1));
  munmap(p, 2 * kPage);
}

TEST_F(MemMonitorTest, FreeOfALargeMallocBlockIsReported) {
  // glibc returns large blocks with its own munmap call, which no symbol hook sees.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator keeps freed blocks mapped (quarantine): no munmap";
#endif
  ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, 128 * 1024), 1);
  const size_t bytes = 1 << 20;
  auto *p = static_cast<uint8_t *>(std::malloc(bytes));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, bytes);
  auto first = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  watch(reinterpret_cast<void *>(first), 16);
  std::free(p);
  EXPECT_TRUE(reported(reinterpret_cast<void *>(first), 16));
}

TEST_F(MemMonitorTest, UnwatchedMemoryIsNotReported) {
  void *p = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, 2 * kPage);
  munmap(p, 2 * kPage);
  EXPECT_TRUE(seen().empty());
}

TEST_F(MemMonitorTest, UnwatchStopsReports) {
  uint8_t *p = mapped_and_watched(2);
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    auto start = reinterpret_cast<uintptr_t>(p);
    monitor_->unwatch_unused(start, start + 2 * kPage);
  }
  munmap(p, 2 * kPage);
  EXPECT_TRUE(seen().empty());
}

TEST_F(MemMonitorTest, ARangeAnotherSubscriberStillUsesStaysWatched) {
  uint8_t *p = mapped_and_watched(2);
  auto start = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    held_.emplace_back(start + kPage, start + 2 * kPage);  // another cache's entry, one page
    monitor_->unwatch_unused(start, start + 2 * kPage);
  }
  munmap(p, 2 * kPage);
  EXPECT_TRUE(reported(p, 2));
}

TEST_F(MemMonitorTest, OnlyThePartAnotherEntryCoversStaysWatched) {
  // Two buffers sharing a page: entries [p0, p2) and [p1, p3). The first one's end leaves
  // [p0, p1) unwatched and [p1, p2) watched for the second.
  uint8_t *p = mapped_and_watched(3);
  auto start = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    held_.emplace_back(start + kPage, start + 3 * kPage);
    monitor_->unwatch_unused(start, start + 2 * kPage);
  }
  munmap(p, kPage);
  EXPECT_TRUE(seen().empty()) << "the page no entry covers is still watched";
  munmap(p + kPage, 2 * kPage);
  EXPECT_TRUE(reported(p + kPage, 2));
}

TEST_F(MemMonitorTest, GapsBetweenEntriesAreUnwatched) {
  // Entries on pages 1 and 3 of five: pages 0, 2 and 4 are unwatched, 1 and 3 stay.
  uint8_t *p = mapped_and_watched(5);
  auto start = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    held_.emplace_back(start + 3 * kPage, start + 4 * kPage);
    held_.emplace_back(start + kPage, start + 2 * kPage);
    monitor_->unwatch_unused(start, start + 5 * kPage);
  }
  for (int page : {0, 2, 4}) munmap(p + page * kPage, kPage);
  EXPECT_TRUE(seen().empty()) << "pages no entry covers are still watched";
  munmap(p + kPage, kPage);
  munmap(p + 3 * kPage, kPage);
  EXPECT_TRUE(reported(p + kPage, 1));
  EXPECT_TRUE(reported(p + 3 * kPage, 1));
}

TEST_F(MemMonitorTest, AFileMappingCannotBeWatched) {
  int fd = one_page_file();
  ASSERT_GE(fd, 0);
  void *p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  static_cast<uint8_t *>(p)[0] = 1;
  {
    std::lock_guard<std::mutex> guard(monitor_->mutex());
    auto start = reinterpret_cast<uintptr_t>(p);
    EXPECT_FALSE(monitor_->watch(start, start + kPage));
  }
  munmap(p, kPage);
  close(fd);
}

TEST_F(MemMonitorTest, ForkLeavesTheParentsRangesWatchedAndTheChildFree) {
  uint8_t *p = mapped_and_watched(2);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child's copy is not watched: unmapping and touching it must not wait for a monitor
    // thread the child does not have.
    p[0] = 9;
    madvise(p, 2 * kPage, MADV_DONTNEED);
    p[0] = 3;
    munmap(p, 2 * kPage);
    _exit(p == nullptr ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(seen().empty());
  EXPECT_EQ(p[0], 0x5a);  // the child's writes were its own
  munmap(p, 2 * kPage);
  EXPECT_TRUE(reported(p, 2));
}

std::atomic<pthread_t> g_handler_thread{};
void note_handler_thread(int) {
  g_handler_thread = pthread_self();
}

TEST_F(MemMonitorTest, TheMonitorThreadTakesNoSignals) {
  // With SIGUSR1 blocked here, a process-directed SIGUSR1 could only run its handler on the
  // monitor thread: it must stay pending instead, and run here once this thread unblocks it.
  struct sigaction act {
  }, old{};
  act.sa_handler = note_handler_thread;
  sigemptyset(&act.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &act, &old), 0);
  sigset_t usr1, saved;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &saved), 0);
  g_handler_thread = pthread_t{};
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  usleep(20000);  // time for another thread to take it, were any to accept it
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGUSR1), 1) << "a thread that is not the test's took SIGUSR1";
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &saved, nullptr), 0);
  EXPECT_TRUE(pthread_equal(g_handler_thread, pthread_self()));
  sigaction(SIGUSR1, &old, nullptr);
}

TEST_F(MemMonitorTest, AMappingThatGrowsInPlaceIsUnwatchedAtItsFirstNewPage) {
  // Four pages reserved, the last two given back, so mremap can grow the first two in place;
  // the grown pages are watched (the registration extends with the mapping) and missing.
  auto *p = static_cast<uint8_t *>(
      mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_EQ(munmap(p + 2 * kPage, 2 * kPage), 0);
  std::memset(p, 0x5a, 2 * kPage);
  watch(p, 2);
  ASSERT_EQ(mremap(p, 2 * kPage, 4 * kPage, 0), p);
  p[3 * kPage] = 1;  // faults through the monitor once, which stops watching the mapping
  EXPECT_TRUE(reported(p, 4));
  const size_t events = seen().size();
  p[2 * kPage] = 2;  // an ordinary fault now
  munmap(p, 4 * kPage);
  EXPECT_EQ(seen().size(), events);
}

TEST_F(MemMonitorTest, FaultingInBeforePinningResolvesMissingPagesOfAWatchedMapping) {
  // A watched mapping grown in place: its new pages are missing and watched. Faulting them in
  // from user space goes through the monitor (which stops watching the mapping) and returns
  // with every page present, as a registration's pinning needs them.
  auto *p = static_cast<uint8_t *>(
      mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_EQ(munmap(p + kPage, 2 * kPage), 0);  // room to grow into
  std::memset(p, 0x5a, kPage);
  watch(p, 1);
  ASSERT_EQ(mremap(p, kPage, 3 * kPage, 0), p);
  fault_in_for_pinning(p + kPage, 2 * kPage);
  unsigned char present[3] = {};
  ASSERT_EQ(mincore(p, 3 * kPage, present), 0);
  EXPECT_TRUE((present[1] & 1) && (present[2] & 1)) << "the grown pages were not faulted in";
  EXPECT_TRUE(reported(p, 3)) << "the monitor took the fault and dropped the mapping";
  munmap(p, 3 * kPage);
}

TEST_F(MemMonitorTest, AForkedChildDoesNotKeepTheUserfaultfd) {
  // A child that kept the parent's userfaultfd open would keep the parent's watches alive after
  // the parent closed it, and the parent's next munmap there would wait for a reader forever.
  mapped_and_watched(1);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char link[256];
    for (int fd = 0; fd < 1024; ++fd) {
      std::string path = "/proc/self/fd/" + std::to_string(fd);
      ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
      if (n <= 0) continue;
      link[n] = '\0';
      if (std::strstr(link, "userfaultfd") != nullptr) _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child inherited the monitor's userfaultfd";
}

TEST(ForkPolicy, TheCacheIsOnOnlyWhereTheKernelCopiesPinnedPagesAtFork) {
  EXPECT_EQ(fork_keeps_cache_off(IBV_FORK_UNNEEDED), nullptr);
  ASSERT_NE(fork_keeps_cache_off(IBV_FORK_DISABLED), nullptr);
  EXPECT_NE(std::string(fork_keeps_cache_off(IBV_FORK_DISABLED)).find("fork"), std::string::npos);
  ASSERT_NE(fork_keeps_cache_off(IBV_FORK_ENABLED), nullptr);
  EXPECT_NE(std::string(fork_keeps_cache_off(IBV_FORK_ENABLED)).find("RDMAV_FORK_SAFE"),
            std::string::npos);
}

TEST(ProcMaps, TellsPrivateAnonymousMemoryFromShared) {
  const size_t page = static_cast<size_t>(kPage);
  void *priv = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void *shared = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(priv, MAP_FAILED);
  ASSERT_NE(shared, MAP_FAILED);
  auto a = reinterpret_cast<uintptr_t>(priv), s = reinterpret_cast<uintptr_t>(shared);
  EXPECT_TRUE(private_anonymous(a, a + 2 * page));
  EXPECT_FALSE(private_anonymous(s, s + page));
  std::vector<uint8_t> heap(1 << 20);
  auto h = reinterpret_cast<uintptr_t>(heap.data());
  EXPECT_TRUE(private_anonymous(h & ~(kPage - 1), (h + heap.size()) & ~(kPage - 1)));
  int local = 0;  // gtest runs this on the main thread, whose stack grows: not cached
  auto st = reinterpret_cast<uintptr_t>(&local) & ~(kPage - 1);
  EXPECT_FALSE(private_anonymous(st, st + page));
  Mapping m;
  ASSERT_TRUE(mapping_at(a + page, &m));
  EXPECT_LE(m.start, a);
  EXPECT_GE(m.end, a + 2 * page);
  EXPECT_TRUE(m.private_anonymous);
  // A hole in the range.
  ASSERT_EQ(munmap(priv, page), 0);
  EXPECT_FALSE(private_anonymous(a, a + 2 * page));
  EXPECT_FALSE(mapping_at(a, &m));
  munmap(static_cast<uint8_t *>(priv) + page, page);
  munmap(shared, page);
}

TEST(ProcMaps, AFileMappingIsNotPrivateAnonymous) {
  int fd = one_page_file();
  ASSERT_GE(fd, 0);
  void *p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto a = reinterpret_cast<uintptr_t>(p);
  EXPECT_FALSE(private_anonymous(a, a + kPage));
  munmap(p, kPage);
  close(fd);
}

TEST_F(MemMonitorTest, OneMonitorPerProcess) {
  std::string why;
  MemMonitor *again = MemMonitor::acquire(&why);
  EXPECT_EQ(again, monitor_);
  MemMonitor::release(again);
}

}  // namespace
}  // namespace braid::verbs
