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

// The two halves of a small broadcast's agreement, in which the root does not wait: the root
// publishes its record and data and is done (as its eager sends would be over a transport);
// every other rank publishes its record, waits for the root's and checks it, failing with
// BRAID_ERR_MISMATCH naming both ranks. A disagreement between two ranks that both think they
// are the root is not seen here (nor by the transports' eager sends).
Task announce_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                   const void *tiny, size_t tiny_bytes);
Task check_against_root(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
                        int root);

}  // namespace braid::coll
