// The node-local shared-memory algorithms of the kinds beyond allreduce, broadcast and barrier
// (those are in algorithms.hpp): one file each, shm_<kind>.cpp. Chosen when every rank of the
// communicator is on one node.
#pragma once

#include "engine/coll_args.hpp"
#include "engine/v_counts.hpp"

namespace braid::coll {

Task reduce_shm(CollContext &ctx, CollArgs args);
Task gather_shm(CollContext &ctx, CollArgs args);
Task scatter_shm(CollContext &ctx, CollArgs args);
Task allgather_shm(CollContext &ctx, CollArgs args);
Task allgatherv_shm(CollContext &ctx, CollArgs args);
Task reduce_scatter_shm(CollContext &ctx, CollArgs args);
Task alltoall_shm(CollContext &ctx, CollArgs args);
Task alltoallv_shm(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
