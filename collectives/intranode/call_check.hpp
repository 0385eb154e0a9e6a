// Ranks of a node agree on the call before any data moves: each publishes what it called
// (kind, count, dtype, op, root) and checks every other rank's record for the same turn. A
// disagreement fails the call on every rank of the node with BRAID_ERR_MISMATCH naming both
// sides, before any window is taken, so the node's window sequence stays in step and nothing is
// read or written past a buffer the caller sized differently.
#pragma once

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// `turn` is the ticket this rank's call took (NodeChannel::take_turn). `tiny` (up to
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
