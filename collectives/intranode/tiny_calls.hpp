// The small-call form of the node-local collectives: when a call's data fits in a call record
// (CallSlot::data), agreeing on the call is also the data exchange. This is one step for every
// kind: publish the record with this rank's data, wait for the records this rank needs (every
// rank's, the root's, or none for a rank that only hands its data over), then take what it
// needs from their slots. The same plan
// and finish serve the algorithms' coroutines and the inline path (inline_call.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/coll_args.hpp"
#include "intranode/call_check.hpp"
#include "intranode/node_channel.hpp"
#include "intranode/shared_buffers.hpp"

namespace braid::coll {

struct TinyPlan {
  bool fits = false;           // the call travels with the records
  const void *data = nullptr;  // what this rank's record carries
  size_t bytes = 0;
  int wait_for = kEveryone;   // whose records it needs (kEveryone, a local rank, kNobody)
  int check_later = kNobody;  // whose it compares at a later call (agree_on_call)
};

// The plan for `args` on this rank; fits == false for calls too large for a record and for
// the kinds that have no small form here. `stage` (sizeof(CallSlot::data) bytes, or null):
// where the kinds whose record is built rather than copied build it (allgatherv: its head,
// then its block; alltoallv: [largest send block][bytes of the blocks packed after the head,
// or ~0 when they do not fit][sendcounts][recvcounts], the counts where they fit, then the
// blocks in rank order); without it they have no small form.
TinyPlan tiny_plan(const NodeChannel &ch, const CollArgs &args, uint64_t *stage = nullptr);

// allgatherv's record starts with a head: [sendcount][recvcounts, where they fit]. Every rank
// checks every rank's recvcounts against every sendcount in the same order, so all of them fail
// with the same message naming the first pair that differs. Writes the head into `stage`;
// returns its bytes.
size_t stage_allgatherv_head(const NodeChannel &ch, const CollArgs &args, uint64_t *stage);
// The check, on the records of `turn` (throws Disagreement).
void check_allgatherv_counts(const NodeChannel &ch, uint32_t turn, const CollArgs &args);

// alltoallv's record head for `n` local ranks, in bytes.
size_t alltoallv_head_bytes(size_t n);
// Whether an alltoallv record (a call slot's data) carries its rank's blocks.
bool alltoallv_packed(const void *record);
// After the head, a record that does not carry its blocks may describe its rank's send buffer
// for the single-copy path (direct.hpp's alltoallv_direct): its SharedRef, then the byte offset
// of the block for each local rank in it, by local rank. Its size, and whether it fits.
constexpr size_t alltoallv_refs_bytes(size_t n) {
  return sizeof(SharedRef) + n * sizeof(uint64_t);
}
bool alltoallv_room_for_refs(size_t n);

// What a rank does before it publishes its record: a scatter's root copies its own block,
// which would otherwise follow the record's stores and, with the readers holding the record's
// lines, wait behind them in a full store buffer (2 ranks, 1-8 KiB: the root's call 0.5-0.9 us
// against a broadcast root's 0.2-0.5). Idempotent.
void tiny_prepare(const NodeChannel &ch, const CollArgs &args);

// The part of local rank `s`'s record data that tiny_finish will read on this rank, as a byte
// offset into CallSlot::data and a length, for a broadcast's or scatter's reader and its root;
// else {0, 0}. The inline path prefetches it while it waits for the root (inline_call.cpp).
// Only these kinds: their root writes and returns, its readers only wait. Where every rank
// writes a record and then reads the others' (allreduce), fetching the peer's lines while it
// was still writing them cost more than it saved (2 ranks, 128-256 B: 1.13-1.17x the time
// without); allgather, alltoall and a reduce's or gather's root were level with it.
struct ReadSpan {
  size_t offset = 0;
  size_t bytes = 0;
};
ReadSpan tiny_read_span(const NodeChannel &ch, const CollArgs &args, int s);

// Completes the call once every record of `turn` this rank needs is published and agreed
// (right after publishing its own when the plan does not wait).
// Throws Disagreement, before writing anything, when the records' counts disagree (the
// v-variants). False, with nothing written, when the records say the call is not small after
// all (alltoallv: the plan always fits, and whether every rank's blocks came with its record
// is known only from the records); the algorithm then takes its large path.
bool tiny_finish(NodeChannel &ch, uint32_t turn, const CollArgs &args);

// How many calls ahead of the others a rank may enter a small call of `kind` in which it waits
// for `wait_for`'s records (TinyPlan::wait_for): 1 for a gather's or reduce's senders,
// kCallsAhead for every other rank. A broadcast's or scatter's root hands its data over and
// returns; a rank that waits for every record (a barrier, an allreduce, a gather's root) waits
// for the others' records of this very turn anyway, and holding it back as well only sent the
// inline path to the scheduler whenever a root had run ahead (4 ranks on 2 cores: the barrier
// between osu-mode broadcasts, 8-64 B broadcasts 5-10 µs held to one, 0.2-0.3 ahead). A
// gather's or reduce's senders return at once too, but their root waits for all of them every
// call: run ahead they only took the shared cores from it (4 ranks on 2 cores, 8 B-2 KiB
// gathers and reduces 3.7-7.2 µs against 3.2-4.6 held to one call).
inline uint32_t calls_ahead(CollKind kind, int wait_for) {
  const bool sender =
      wait_for == kNobody && kind != CollKind::broadcast && kind != CollKind::scatter;
  return sender ? 1 : kCallsAhead;
}

// A call whose plan fits, from agreement to completion: a rank may be up to calls_ahead calls
// ahead of the others when it enters (node_channel.hpp).
Task tiny_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
               TinyPlan plan);

}  // namespace braid::coll
