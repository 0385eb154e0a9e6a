// The allgather algorithms. `count` is one rank's block; recvbuf holds n blocks in rank order.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task allgather_ring(CollContext &ctx, CollArgs args);
Task allgather_bruck(CollContext &ctx, CollArgs args);
Task allgather_recursive_doubling(CollContext &ctx, CollArgs args);
// allgatherv: the blocks' sizes and places come from counts/displs.
Task allgatherv_ring(CollContext &ctx, CollArgs args);

// In place or not, this rank's block in recvbuf (copied from sendbuf when not in place).
void place_own_block(const CollArgs &args, int rank, size_t offset, size_t bytes);

}  // namespace braid::coll
