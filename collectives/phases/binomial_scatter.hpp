// The binomial scatter phase (tree.hpp): the root holds every block, in virtual-rank order and
// contiguous; each rank receives from its parent, in one message, the blocks of its subtree
// [v, subtree_end) and passes each child its own subtree's, the largest first, as the tree fans
// out. log2(n) steps. Used by scatter (uniform blocks) and broadcast's scatter + allgather
// (near-equal blocks of the vector, in place).
#pragma once

#include <cstdint>

#include "engine/coll_args.hpp"
#include "phases/blocks.hpp"
#include "phases/tree.hpp"

namespace braid::coll {

// `sub`: where block tree.v lies, blocks v .. subtree_end - 1 following it as `blocks` lays them
// out (indexed by virtual rank, contiguous); the root's `sub` holds them all on entry. Every
// message is number `step`.
Task binomial_scatter(CollContext &ctx, const Tree &tree, char *sub, const Blocks &blocks,
                      uint32_t step);

}  // namespace braid::coll
