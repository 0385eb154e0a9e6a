// Node-aware algorithms of the kinds beyond allreduce and broadcast (those are in
// algorithms.hpp) for ranks that share nodes across several nodes: a node-local stage through
// shared memory and one rank per node over the transport. One file each,
// hierarchical_<kind>.cpp.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task reduce_hierarchical(CollContext &ctx, CollArgs args);
Task allgather_hierarchical(CollContext &ctx, CollArgs args);
Task barrier_hierarchical(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
