// Ranks of a node agree on the call before any data moves: each publishes what it called
// (kind, count, dtype, op, root) and checks every other rank's record for the same turn. A
// disagreement fails the call on every rank of the node with BRAID_ERR_MISMATCH naming both
// sides, before any window is taken, so the node's window sequence stays in step and nothing is
// read or written past a buffer the caller sized differently.
#pragma once

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// This call's node turn: a new one, or the one the inline path took (CollArgs::turn_taken).
inline uint32_t call_turn(NodeChannel &ch, const CollArgs &args) {
  return args.turn_taken ? args.turn : ch.take_turn();
}

// The record of this rank's call number `seq` (CollContext::seq).
CallRecord record_of(const CollArgs &args, uint64_t seq);
bool same_call(const CallRecord &a, const CallRecord &b);
// Writes and publishes this rank's record (and tiny data) for `turn`, once nobody may still
// read the slot (see NodeChannel::slot_blocker; the caller waited for that).
void write_record(NodeChannel &ch, uint32_t turn, const CallRecord &mine, const void *tiny,
                  size_t tiny_bytes);

// `turn` is the ticket this rank's call took (call_turn). When the inline path already
// published this rank's record (CollArgs::entered) only the others' are awaited. `tiny` (up to
// sizeof(CallSlot::data) bytes, or null) travels with the record: once this returns, every local
// rank's is in ch.call_slot(rank, turn).data, readable until this rank enters its next call.
Task agree_on_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                   const void *tiny = nullptr, size_t tiny_bytes = 0);

// Only publishes this rank's record (and tiny data), without waiting for the others': for a
// rank whose whole part of a small call is to hand its data over and that needs nothing back
// (a gather's or reduce's non-root, a scatter's root), as an eager send returns in MPI. A
// disagreement is seen by the ranks that wait, and this rank learns of it from the control
// plane at its next call at the latest (the scheduler's "out of step" notice).
Task publish_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                  const void *tiny, size_t tiny_bytes);

}  // namespace braid::coll
