// Whether a node-local call streams its copies into the result past the cache (copy_streaming,
// kernels/stream_copy.hpp), decided by each rank for its own copies.
//
// What the cache holds between calls is not the machine's alone: on the 2-core EPYC VM, whose
// guest sees 32 MiB of L3, a 2-rank 4 MiB allgather (its ranks' buffers 24 MiB) ran 1.33x Open
// MPI without streaming and 1.01x with it on 2026-12-01 at 04:00, and 0.84x without, 1.24x with
// at 09:00 the same day (memcpy of 4 MiB 20-30 GB/s then, 49 GB/s later: the host's other guests
// take a share of the cache that changes by the hour). So the cache size only bounds the
// question: calls whose ranks' buffers fill at most half the cache never stream (they stay
// cached: 7-17% slower streamed on both days), those filling more than four times it always do
// (faster on both days: 4-rank alltoall of 4-16 MiB 0.88-0.92x against 1.01-1.22x), and in
// between each rank times its calls both ways, as CopyChooser times single copy against the
// windows, and keeps the faster (NodeChannel holds one StreamChoice per collective kind: their
// times per byte of footprint differ).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "intranode/single_copy.hpp"

namespace braid::coll {

class StreamChoice {
 public:
  // The call's buffers (what each rank sends and receives, times the ranks sharing the cache)
  // as a share of the cache: at most kNever never streams, above kAlways always does.
  static constexpr double kNever = 0.5;
  static constexpr double kAlways = 4.0;

  // Timed at every size, whatever the cache (deposits into the node's windows, whose cost is
  // the core-to-core link's, not the cache's: NodeChannel::streams_deposits): the first calls
  // of a size class go the way `streamed_first` says, the fourth and fifth the other, and so on
  // as in between the bounds. Streamed first, a held call streams too: a gather's windows run
  // in a slow spell only in the copy path's retries (held), and must be tried at their best
  // there whatever a fast spell taught.
  void time_at_every_size(bool streamed_first = false) {
    everywhere_ = true;
    streamed_first_ = streamed_first;
  }

  // The last-level cache: `bytes` (0: unknown, nothing streams; 1: BRAID_CACHE_BYTES=1, every
  // call that copies streams) shared by `ranks` of the node's ranks.
  void set_cache(size_t bytes, int ranks) {
    cache_bytes_ = bytes;
    cache_ranks_ = static_cast<size_t>(ranks > 0 ? ranks : 1);
  }
  // Whether this call, in which each rank sends and receives `footprint` bytes, streams. Where
  // the chooser decides, `hold` keeps its current choice without starting a retry (the call is
  // the copy path's try of its other way, or the first back after one: its time would say
  // nothing about streaming), and else the call's time is expected from measured(). Counted
  // when it streams.
  bool decide(size_t footprint, bool hold);
  // What the call decided above took, from its agreement to its end; `skip`: do not count it
  // (a retry of the copy path ran). Ignored when the call did not ask the chooser (decide()
  // forgets a call that ended without this). Returns
  // whether the call tried the way not kept, or was the first back after such a retry: its
  // time says little about the copy path either (CopyTimer does not report it there).
  bool measured(uint64_t ns, bool skip);
  // The call decided last made no copies that way after all (it went another path): not
  // counted, not timed.
  void forget();
  // Whether the call decided last, not yet measured, tries the way not kept or is the first back
  // after such a try (its time says little about another choice timed in the same call).
  bool trying() const { return pending_ && unsettled_; }

  uint64_t streamed_calls() const { return streamed_calls_.load(std::memory_order_relaxed); }
  // Nanoseconds per byte of footprint measured lately with (`streamed`) and without streaming
  // in the size class of `footprint` (0: never measured), for tests.
  double rate(bool streamed, size_t footprint) const;

 private:
  // The call's buffers as a share of the cache (cache_bytes_ not 0).
  double share(size_t footprint) const {
    return static_cast<double>(footprint) * static_cast<double>(cache_ranks_) /
           static_cast<double>(cache_bytes_);
  }
  // Whether the share suggests streaming: the cache at least once over by the smallest
  // footprint of its chooser class, so that the suggestion holds for the whole class.
  bool suggests_streaming(size_t footprint) const {
    if (everywhere_) return streamed_first_;
    return share(kSingleCopyMinBytes << CopyChooser::class_of(footprint)) >= 1;
  }
  // Timed: the chooser decides.
  bool timed_choice(size_t footprint, bool hold);

  bool everywhere_ = false;
  bool streamed_first_ = false;
  size_t cache_bytes_ = 0;
  size_t cache_ranks_ = 1;
  // Its "single" is the way the share of the cache suggests (suggests_streaming), so that a class's
  // first call, which it does not count, goes that way. A try of the other way is two calls: the
  // first is not counted (it finds the destination in the state the other way left it), and
  // streaming has no warming up over calls, as single copy has.
  CopyChooser chooser_{2};
  bool pending_ = false;
  bool suggested_ = false;  // the pending call went the way the share suggests
  bool unsettled_ = false;  // the pending call retries the way not kept, or follows a retry
  bool counted_ = false;    // the call decided last was counted as streamed
  size_t footprint_ = 0;
  std::atomic<uint64_t> streamed_calls_{0};
};

}  // namespace braid::coll
