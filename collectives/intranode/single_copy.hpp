// Single copy for ordinary buffers: a node-local collective whose buffers are not in a
// braid_mem_alloc region (which peers map, direct.hpp) can still skip the segment's windows:
// the rank that needs a peer's data reads it straight out of the peer's buffer with
// cross-memory attach (process_vm_readv), as Open MPI's and MPICH's shared-memory transports do
// for large messages.
//
// Which of the two is faster changes with the machine, and on one machine by the minute: the
// windows make the reader pull lines the writer has just dirtied across the core-to-core link
// (23 GB/s on the 2-core EPYC VM when the link is fast, 2 GB/s in a slow spell), while CMA
// reads the owner's buffer as it is, at a rate the link barely moves (about 13 GB/s there) but
// pays the kernel's page pinning. So each rank that copies keeps what both cost it lately, per
// size class, and chooses the cheaper, trying the other again now and then (CopyChooser). The
// choice is a vote: a collective goes single-copy only if every rank that copies wants it
// (direct.cpp's agreement step), so ranks need not choose alike.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "intranode/shared_buffers.hpp"

namespace braid::coll {

// From here up (bytes each reader copies) a collective may go single-copy. Below, the calls
// travel with the call records (tiny_calls.hpp) or in one window, and the agreement step and a
// system call would be most of the call. Open MPI's vader switches to CMA above 4 KiB too.
constexpr size_t kSingleCopyMinBytes = size_t{4} << 10;

// [p, p + bytes) of this process as a peer reads it through CMA.
SharedRef cma_ref(const void *p);

// Copies `bytes` from address `addr` in process `pid` to `dst`. False with errno set when the
// kernel refuses (no ptrace permission, seccomp, the process is gone) or the range is not
// mapped there.
bool cma_read(int pid, uint64_t addr, void *dst, size_t bytes);

// Lets any process of this user read this one through CMA where Yama's ptrace_scope 1 would
// allow only its ancestors (braidrun's ranks are siblings). What Open MPI does for the same
// reason; a no-op without Yama.
void allow_cma_readers();

// Per size class (powers of two from kSingleCopyMinBytes): what a call cost this rank lately by
// single copy and by the windows, and which to use next.
class CopyChooser {
 public:
  static constexpr size_t kClasses = 32;  // 4 KiB, 8 KiB, ... (the last takes all above)
  // `retry_calls`: the longest retry burst (kRetryCalls where the path warms up over calls).
  explicit CopyChooser(uint32_t retry_calls = kRetryCalls) : retry_calls_(retry_calls) {}
  static size_t class_of(size_t bytes);
  // Whether the next call of `bytes` should go single-copy.
  bool prefer_single(size_t bytes);
  // A call of `bytes` took `ns` (from the agreement step to the end) on the path it took.
  void measured(bool single, size_t bytes, uint64_t ns);
  // What the cost model predicts each path costs a call of `bytes` (ns per byte): after the
  // class's first call (single copy, cold, not counted) the cheaper goes first and the other
  // waits for the first retry, instead of each path once (a cold single copy cost 7x a
  // windowed call once). Measurements replace the figures.
  void seed(size_t bytes, double windows_ns_per_byte, double single_ns_per_byte);
  // The path kept for `bytes` (the one a retry under way would return to), without counting a
  // call or starting a retry.
  bool preferred(size_t bytes) const;
  // Whether the call prefer_single just answered for `bytes` is a retry of the other path, or
  // the first back on the path kept after one (which may find it cold, and is not counted).
  bool unsettled(size_t bytes) const {
    const Class &c = classes_[class_of(bytes)];
    return c.retrying || c.settling;
  }
  // Nanoseconds per byte measured lately on each path (0: never measured), for tests.
  double rate(bool single, size_t bytes) const;

 private:
  // Calls before the other path is tried again; the interval grows 4x while the choice holds:
  // a retry of the slower path costs 2-5x a call (single copy on a fast day, the windows in a
  // slow spell), so retries must become rare fast, yet a machine that changes is noticed
  // within about a thousand calls where retries are cheap (kRetryBudget stretches that where
  // they are not). (8 then 2x up to 256 cost allreduce at 64 KiB 8-10% on a fast day against
  // BRAID_CMA=off, five interleaved runs.)
  static constexpr uint32_t kFirstRetry = 16;
  // A size class's first retry is its fourth call (the first goes single copy; each path's
  // first call in a class is cold and not counted; where the model puts the windows first they
  // run on the second and third): what the other path costs the first times after a run of
  // this one is paid early, not at the 16th call, inside a benchmark's timed ones (+260 us a
  // call for a 4 MiB allgather of 44 timed calls). A broadcast's root goes windows on the first
  // call (its readers have not said what they want), so there the retry comes a call later.
  static constexpr uint32_t kExplore = 4;
  static constexpr uint32_t kLastRetry = 1024;
  // A retry is a burst of up to this many calls of the other path: the first only warms it
  // up (not counted), the next are, cut short as soon as it wins, or stops getting faster than
  // the call before while more than kCloseRetry behind; its figure is the burst's fastest. On the
  // 2-core EPYC VM the first process_vm_readv of pages not read that way lately costs 5-25x the
  // steady figure (1 MiB: 1.2-1.9 ms, then 0.1-0.3, then 0.06), and the first windowed call after a
  // run of single copies 20x (32-64 KiB: 76-94 us, then 3-5): one-call retries kept whichever path
  // came first, and auto stayed 13-40% behind the better forced path (2-rank allgather,
  // 1-4 MiB, in a slow spell).
  static constexpr uint32_t kRetryCalls = 5;
  // A retry's call within this factor of the path kept does not end the burst even where it is
  // no faster than the call before: on the VM, single copy warms up over four or five calls
  // back to back, with plateaus (2-rank alltoall at 4 MiB after the windows: 1007, 553, 548,
  // 463, 467, 425, 403, 357 us against the windows' 497-597), and its warmth fades within a
  // few ms of not running, busy or idle (braid-micro-cma's cma_read_after_pause, 2 MiB:
  // 139-159 us back to back, 355-539 after 3 ms of spinning). Stopped at the plateau, auto
  // kept the windows.
  static constexpr double kCloseRetry = 1.25;
  // What a retry that did not change the choice cost over the path kept (its calls' excess)
  // is at most this share of the calls until the next: a cold burst of single copy at 4 MiB
  // cost 9 ms, 30 windowed calls, so retries of it every 16-64 calls kept auto 40-60% behind
  // BRAID_CMA=off. Such retries wait up to kLongestRetry calls.
  static constexpr double kRetryBudget = 0.05;
  static constexpr uint32_t kLongestRetry = 16384;
  struct Class {
    std::array<double, 2> ns_per_byte{0, 0};  // [windows, single]
    uint32_t since_retry = 0;
    uint32_t retry_every = kExplore;
    bool retrying = false;         // the call under way is a retry of the path not preferred
    uint32_t burst = 0;            // calls of the retry made so far (0: none under way)
    double last_retry = 0;         // what the retry's latest call cost (ns per byte)
    bool single_was_best = false;  // the choice when the retry began
    bool settling = false;         // a retry just ended: the next call may find the path cold
    double excess = 0;             // what the retry under way cost over the path kept (ns per byte)
    bool late = false;  // the retry's first call landed on the path kept (see measured())
    std::array<bool, 2> predicted{false, false};  // the figure is the model's, not measured
    std::array<double, 2> model{0, 0};            // the model's figures (seed)
    std::array<bool, 2> cold{true, true};         // the path has not run in this class yet
  };
  uint32_t retry_calls_;
  std::array<Class, kClasses> classes_{};
};

}  // namespace braid::coll
