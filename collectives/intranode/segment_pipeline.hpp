// Large hierarchical collectives cut into segments whose stages overlap: while the node leaders
// exchange segment i over the transport, their nodes already work on the neighbouring segments
// in shared memory. See segment_pipeline.cpp.
#pragma once

#include <cstddef>

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// Bytes per pipeline segment for a hierarchical collective of `bytes` on `m`, or 0 when the
// stages should run one after the other (small vectors, one node). Every rank computes the same
// value: the leaders' sub-collectives must be cut the same way on every node.
size_t pipeline_segment_bytes(size_t bytes, size_t elem_size, const detail::NodeMap &m);

// The hierarchical collectives by segments of `segment` bytes (called after the call check).
Task allreduce_pipelined(CollContext &ctx, NodeChannel &ch, CollArgs args, size_t segment);
Task broadcast_pipelined(CollContext &ctx, NodeChannel &ch, CollArgs args, size_t segment);

// Runs the leaders' algorithm `inner.inner` with the context's ranks renumbered to the leaders.
Task among_leaders(CollContext &ctx, const detail::NodeMap &m, CollArgs inner);
// `fn` run by one rank per node, `members` (communicator ranks, by node) with this rank as
// `my_index`: the leaders, or the leaders with the root in its node leader's place.
Task among_group(CollContext &ctx, const int *members, int size, int my_index, AlgorithmFn fn,
                 CollArgs args);

}  // namespace braid::coll
