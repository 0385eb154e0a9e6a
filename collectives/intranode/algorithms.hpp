// The node-aware collectives: `shm` when every rank is on one node, `hierarchical` when ranks
// share nodes across several nodes. The selection table picks them by topology.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task allreduce_shm(CollContext &ctx, CollArgs args);
Task broadcast_shm(CollContext &ctx, CollArgs args);
Task allreduce_hierarchical(CollContext &ctx, CollArgs args);
Task broadcast_hierarchical(CollContext &ctx, CollArgs args);
Task barrier_shm(CollContext &ctx, CollArgs args);

// For braid-info --explain: the path inside the shm algorithms for a call of `bytes`.
const char *allreduce_shm_note(size_t bytes);
const char *broadcast_shm_note(size_t bytes);

}  // namespace braid::coll
