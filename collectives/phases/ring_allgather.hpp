// The ring allgather phase: every rank starts with its own block in `buf` and ends with every
// block. In step t a rank forwards to its right neighbour the block it received in step t-1.
// Used by allgather(v), broadcast (scatter + allgather) and reduce-scatter-based algorithms.
#pragma once

#include <cstdint>

#include "engine/coll_args.hpp"
#include "phases/blocks.hpp"

namespace braid::coll {

// Rank r owns block (r - shift) mod n (broadcast's virtual ranks; 0 for allgather). Messages
// are numbered from `step0` to step0 + n - 2.
Task ring_allgather(CollContext &ctx, char *buf, const Blocks &blocks, int shift, uint32_t step0);

}  // namespace braid::coll
