// Whether a rank's deposits into the node's windows stream (copy_streaming), told by the rate of
// its own ordinary deposits: they are what a slow spell of the core-to-core link slows.
//
// The machine's link alternates between a fast state (cache-line round trip 60-100 ns) and a
// slow one (300-360 ns) by the second or the minute (docs/intranode.md, "Deposits into the
// windows"). In a slow spell, ordinary stores into window lines that other cores read are the
// whole cost of a call, while streaming stores are not slowed; on a fast day the readers take
// ordinary stores from the writer's cache faster than streamed ones from memory. A rank's own
// ordinary deposits show which state it is in, call by call: 4 ranks on 2 cores, alltoall
// windows with BRAID_CMA=off, median deposit rates of 16 KiB, 256 KiB and 4 MiB blocks
// 3.4-3.5, 3.7-6.2 and 4.4 GB/s slow against 16, 34-37 and 17 fast, every run on one side of
// kSlowBelow or the other. Whole-call timings (StreamChoice) need a call of each way per size
// class and were too noisy to keep the faster way at four ranks; this needs one deposit. One
// slow deposit is enough (a rank descheduled mid-copy on shared cores costs kProbeEvery
// deposits streamed, no more); copies from sources beyond the cache may read slow on a fast
// day too (memcpy of 16-64 MiB 7-11 GB/s on that VM), where streaming is the better way anyway
// (stream_copy.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace braid::coll {

class DepositGauge {
 public:
  // Ordinary deposits slower than this many bytes per ns (GB/s) mean a slow spell.
  static constexpr double kSlowBelow = 8.0;
  // Deposits smaller than this say nothing (a clock read costs tens of ns).
  static constexpr size_t kMinBytes = size_t{4} << 10;
  // In a slow spell, one deposit in this many still goes the ordinary way, to see it end.
  static constexpr uint32_t kProbeEvery = 16;

  // Every deposit streams (BRAID_CACHE_BYTES=1).
  void always_stream() { always_ = true; }
  // Whether this rank's next deposit, of `bytes`, streams. Only deposits that ordinary() would
  // time count towards a probe.
  bool streams(size_t bytes);
  // An ordinary deposit of `bytes` took `ns`.
  void ordinary(size_t bytes, uint64_t ns);
  bool slow() const { return slow_; }
  // Deposits that streamed (counter intranode_slow_link_deposits).
  uint64_t streamed() const { return streamed_.load(std::memory_order_relaxed); }

  // Runs `copy(streamed)`, this rank's deposit of `bytes` into a window, the way the gauge
  // says, and times it where it went the ordinary way.
  template <class Copy>
  void deposit(size_t bytes, Copy &&copy) {
    if (streams(bytes)) {
      copy(true);
      streamed_.store(streamed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    copy(false);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);
    ordinary(bytes, static_cast<uint64_t>(ns.count()));
  }

 private:
  bool always_ = false;
  bool slow_ = false;
  uint32_t since_probe_ = 0;
  std::atomic<uint64_t> streamed_{0};  // one writer: the thread that holds the communicator
};

}  // namespace braid::coll
