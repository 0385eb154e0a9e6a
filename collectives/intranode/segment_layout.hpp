// The node segment's per-rank control lines, as every rank of the node maps them (NodeChannel,
// node_channel.hpp, is one rank's view of the whole segment).
//
// Layout (every part cache-line aligned, each rank's part page aligned so that first touch by
// its owner places it on the owner's NUMA node):
//   PeerControl[n]       per rank: its counters (written only by it), then on a line of its own
//                        the count of ranks sleeping on them (written by the others)
//   InlineSlot[n][kBuffers] per rank and buffer: a counter and a tiny vector on one cache line,
//                        so a peer gets both with one cache miss (the smallest allreduces)
//   buffers[n][kBuffers] per rank: kBuffers windows of kWindow bytes it writes, others read
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "intranode/single_copy.hpp"

namespace braid::coll {

// What a rank called, published before it takes part, so ranks that disagree find out before
// any window is used (see call_check.hpp).
struct CallRecord {
  int32_t kind = 0;
  int32_t dtype = 0;
  int32_t op = 0;
  int32_t root = 0;
  uint64_t count = 0;
  uint64_t seq = 0;  // the rank's own call number, for the message
};

// A call record with room for a small vector right after it: calls of up to 8224 bytes (8 KiB
// and a little) send their data with the record, so agreeing on the call is also the data
// exchange (one synchronisation step instead of two; a peer reads the record's line and as
// many more as the data needs). 288 bytes was the first size tried; 2 KiB took 512 B-2 KiB
// allreduces from 0.39-0.51 us to 0.23-0.35 on 2 ranks; 8 KiB (in a slow spell, 2 ranks) took
// 4 KiB broadcasts from 3.5 to 0.8 us, allgathers from 4.1 to 1.3, and 4-rank alltoalls of
// 1-2 KiB blocks from 23 to 13 us. Larger calls put other things there (direct.hpp).
//
// `mark` (turn + 1 once record and data of that turn are written) shares the first line with
// the record and the first 24 data bytes: a peer waiting for this rank's entry polls the line
// it then reads, so entering costs one cache-line transfer per reader instead of two (a counter
// line, then the record's). Alone it measured within noise (8 B allreduce, 2 ranks: 0.32 us
// before and after); with the inline path (inline_call.hpp) the exchange is most of a call.
struct alignas(64) CallSlot {
  std::atomic<uint32_t> mark{0};
  uint32_t unused = 0;
  CallRecord record;
  alignas(8) char data[8224];  // aligned for every element type
};
static_assert(sizeof(CallRecord) == 32 && sizeof(CallSlot) == 8320);

// How far a rank may run ahead of the others in small calls (calls_ahead, tiny_calls.hpp: a
// gather's or reduce's senders are held to one), so that a broadcast's or scatter's root,
// which waits for nobody's record, hands its data over and returns: MPI's eager sends
// let a root return at once, and a root held to one call ahead waits for every reader to be
// scheduled, which on shared cores is a scheduler round trip per call (4 ranks on 2 cores:
// 8 B broadcasts 7x Open MPI's time). The slots keep twice that many turns, so that a rank that
// returned without comparing its record with the others' (call_check.hpp) still finds theirs
// up to kCallSlots - kCallsAhead calls later.
inline constexpr uint32_t kCallSlots = 16;
inline constexpr uint32_t kCallsAhead = 8;
static_assert(kCallSlots >= 2 * kCallsAhead && (kCallSlots & (kCallSlots - 1)) == 0);

struct alignas(64) PeerControl {
  std::atomic<uint32_t> posted{0};
  std::atomic<uint32_t> reduced{0};
  std::atomic<uint32_t> done{0};
  int32_t pid = 0;
  // Whether this rank mapped every buffer a direct (zero-copy) collective needs; written before
  // `posted` publishes the window of that step (direct.hpp).
  std::atomic<uint32_t> direct_ok{0};
  uint32_t unused = 0;
  // Where this line is in its owner's address space: what a peer reads with CMA to learn
  // whether the kernel lets it (single_copy.hpp).
  uint64_t self_addr = 0;
  // Per CopyChooser size class, how this rank wants to read a root's buffer in its next
  // broadcast or scatter of that size: 0 not known yet, 1 by the windows, 2 by single copy. The
  // root offers its buffer for single copy when every other rank wants that (direct.hpp).
  std::atomic<uint8_t> wants_single[CopyChooser::kClasses]{};
  // Per size class and path (windows, single copy): what this rank's part of its latest
  // broadcast, scatter or gather of that size on ordinary buffers cost it, in ns (0: not
  // yet). Where ranks share cores the choosers (a broadcast's or scatter's readers, a gather's
  // root) choose by the sum over the ranks (NodeChannel::call_cost).
  alignas(64) std::atomic<uint32_t> part_ns[CopyChooser::kClasses][2]{};
  alignas(64) std::atomic<uint32_t> sleepers{0};
  // By turn % kCallSlots. A rank enters turn t (rewriting the slot of t - kCallSlots) only after
  // every other rank entered t - calls_ahead (tiny_calls.hpp): t - kCallsAhead in a small call
  // but a gather's or reduce's senders', else t - 1. So it is never more than kCallsAhead calls
  // ahead of another at entry (one more in the very first turns, whose slots are fresh and have
  // no turn before to wait for).
  // A rank has entered turn t when calls[t % kCallSlots].mark >= t + 1 (the marks only grow).
  CallSlot calls[kCallSlots];
};
static_assert(sizeof(PeerControl) == 384 + kCallSlots * sizeof(CallSlot) &&
              offsetof(PeerControl, sleepers) == 320);

struct alignas(64) InlineSlot {
  std::atomic<uint32_t> posted{0};
  alignas(8) char data[56];  // aligned for every element type
};
static_assert(sizeof(InlineSlot) == 64);

using Counter = std::atomic<uint32_t> PeerControl::*;

}  // namespace braid::coll
