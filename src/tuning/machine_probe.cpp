#include "tuning/machine_probe.hpp"

#include <sched.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <thread>
#include <vector>

#include "error.hpp"

namespace braid::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t KiB = 1024, MiB = 1024 * KiB;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  sched_setaffinity(0, sizeof set, &set);  // checked beforehand (check_core)
}

void check_core(int core) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || core < 0 || core >= CPU_SETSIZE ||
      !CPU_ISSET(core, &allowed))
    fail(BRAID_ERR_INVALID_ARGUMENT, "core ", core,
         " is not one this process may run on (see taskset, or the cores of its cgroup)");
}

// Two threads, one per core, run `a` and `b` at the same time.
template <class A, class B>
void on_two_cores(int core_a, int core_b, A a, B b) {
  std::thread tb([&] {
    pin(core_b);
    b();
  });
  std::thread ta([&] {
    pin(core_a);
    a();
  });
  ta.join();
  tb.join();
}

// A cache line written on core a and read on core b, then back: the cost every handoff of the
// node path pays. The median of 7 batches of up to 20000 round trips; a batch stops after 20 ms
// (a core shared with other work makes each trip wait for the scheduler).
double handoff_rtt_ns(int core_a, int core_b) {
  constexpr uint32_t kTrips = 20000;
  constexpr int kBatches = 7;
  constexpr double kBudgetS = 0.02;
  alignas(64) std::atomic<uint32_t> line{0};
  alignas(64) std::atomic<bool> stop{false};
  std::vector<double> batch_ns;
  on_two_cores(
      core_a, core_b,
      [&] {
        uint32_t v = 0;
        for (int b = 0; b < kBatches; ++b) {
          const auto t0 = Clock::now();
          uint32_t trips = 0;
          while (trips < kTrips) {
            line.store(++v, std::memory_order_release);
            while (line.load(std::memory_order_acquire) != v + 1) {
            }
            ++v;
            if (++trips % 256 == 0 && seconds_since(t0) > kBudgetS) break;
          }
          batch_ns.push_back(seconds_since(t0) * 1e9 / trips);
        }
        stop.store(true, std::memory_order_release);
      },
      [&] {
        uint32_t answered = 0;
        while (!stop.load(std::memory_order_acquire)) {
          const uint32_t v = line.load(std::memory_order_acquire);
          if (v % 2 == 1 && v != answered) {
            answered = v;
            line.store(v + 1, std::memory_order_release);
          }
        }
      });
  std::sort(batch_ns.begin(), batch_ns.end());
  return batch_ns[batch_ns.size() / 2];
}

double memcpy_gbps(size_t bytes, int reps) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  std::memcpy(dst.data(), src.data(), bytes);  // first touch outside the timing
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    best = std::max(best, static_cast<double>(bytes) / seconds_since(t0) / 1e9);
  }
  return best;
}

// The node path's window protocol, between threads: core a copies 256 KiB windows of its input
// into a ring of 4 and publishes each, core b copies each out and frees it. 16 MiB go through
// the ring, from and to 1 MiB buffers that stay in each core's cache as a collective's do
// between calls: with 16 MiB buffers the figure was main memory's rate (about memcpy's at
// 64 MiB, 10 GB/s, on a day the protocol moved 23 GB/s), not the core-to-core link's.
double window_copy_gbps(int core_a, int core_b) {
  constexpr size_t kWindow = 256 * KiB, kTotal = 16 * MiB, kBuffer = 1 * MiB;
  constexpr uint32_t kRing = 4, kWindows = kTotal / kWindow, kPerBuffer = kBuffer / kWindow;
  std::vector<char> src(kBuffer, 1), dst(kBuffer, 0), ring(kRing * kWindow, 0);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    alignas(64) std::atomic<uint32_t> posted{0};
    alignas(64) std::atomic<uint32_t> done{0};
    Clock::time_point t0;
    double took = 0;
    on_two_cores(
        core_a, core_b,
        [&] {
          t0 = Clock::now();
          for (uint32_t w = 0; w < kWindows; ++w) {
            while (w >= kRing && done.load(std::memory_order_acquire) < w - kRing + 1) {
            }
            std::memcpy(ring.data() + (w % kRing) * kWindow,
                        src.data() + (w % kPerBuffer) * kWindow, kWindow);
            posted.store(w + 1, std::memory_order_release);
          }
          while (done.load(std::memory_order_acquire) < kWindows) {
          }
          took = seconds_since(t0);
        },
        [&] {
          for (uint32_t w = 0; w < kWindows; ++w) {
            while (posted.load(std::memory_order_acquire) < w + 1) {
            }
            std::memcpy(dst.data() + (w % kPerBuffer) * kWindow,
                        ring.data() + (w % kRing) * kWindow, kWindow);
            done.store(w + 1, std::memory_order_release);
          }
        });
    best = std::max(best, static_cast<double>(kTotal) / took / 1e9);
  }
  return best;
}

double reduce_gbps() {
  constexpr size_t kCount = MiB / sizeof(float);
  std::vector<float> a(kCount, 1.0f), b(kCount, 2.0f), out(kCount, 0.0f);
  double best = 0;
  for (int r = 0; r < 20; ++r) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < kCount; ++i) out[i] = a[i] + b[i];
    const double s = seconds_since(t0);
    best = std::max(best, static_cast<double>(kCount * sizeof(float)) / s / 1e9);
  }
  // Keep the loop: the result is read.
  if (out[kCount / 2] != 3.0f) fail(BRAID_ERR_INTERNAL, "machine probe: wrong float sum");
  return best;
}

// process_vm_readv from a forked child's own pages (written by the child, so not shared
// copy-on-write), 256 KiB per call; 0 when the kernel refuses (ptrace restrictions).
double cma_gbps() {
  constexpr size_t kBytes = 8 * MiB, kChunk = 256 * KiB;
  int to_parent[2], to_child[2];
  if (pipe(to_parent) != 0) return 0;
  if (pipe(to_child) != 0) {
    close(to_parent[0]);
    close(to_parent[1]);
    return 0;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
    return 0;
  }
  if (pid == 0) {
    // The child's copies of the parent's ends: with to_child's write end open here, the read
    // below would never see the parent close it.
    close(to_parent[0]);
    close(to_child[1]);
    std::vector<char> buf(kBytes);
    std::memset(buf.data(), 7, kBytes);
    const uintptr_t at = reinterpret_cast<uintptr_t>(buf.data());
    if (write(to_parent[1], &at, sizeof at) != sizeof at) _exit(1);
    char c;
    if (read(to_child[0], &c, 1) < 0) _exit(1);
    _exit(0);
  }
  close(to_parent[1]);
  close(to_child[0]);
  uintptr_t at = 0;
  double best = 0;
  if (read(to_parent[0], &at, sizeof at) == sizeof at) {
    std::vector<char> local(kChunk);
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      bool ok = true;
      for (size_t off = 0; off < kBytes && ok; off += kChunk) {
        iovec mine{local.data(), kChunk};
        iovec theirs{reinterpret_cast<void *>(at + off), kChunk};
        ok = process_vm_readv(pid, &mine, 1, &theirs, 1, 0) == static_cast<ssize_t>(kChunk);
      }
      if (!ok) break;
      best = std::max(best, static_cast<double>(kBytes) / seconds_since(t0) / 1e9);
    }
  }
  close(to_child[1]);  // the child's read returns: it exits
  close(to_parent[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return best;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

MachineProfile probe_machine(int core_a, int core_b) {
  check_core(core_a);
  check_core(core_b);
  if (core_a == core_b)
    fail(BRAID_ERR_INVALID_ARGUMENT, "the two cores must differ (both ", core_a, ")");
  MachineProfile p;
  p.core_a = core_a;
  p.core_b = core_b;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.measured_at = utc_now();
  p.handoff_rtt_ns = handoff_rtt_ns(core_a, core_b);
  p.memcpy_gbps = memcpy_gbps(4 * MiB, 20);
  p.memcpy_large_gbps = memcpy_gbps(64 * MiB, 3);
  p.window_copy_gbps = window_copy_gbps(core_a, core_b);
  p.reduce_gbps = reduce_gbps();
  p.cma_gbps = cma_gbps();
  return p;
}

}  // namespace braid::detail
