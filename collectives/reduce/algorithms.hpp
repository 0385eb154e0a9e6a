// The reduce algorithms (the result at the root only). See docs/algorithms.md.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task reduce_binomial(CollContext &ctx, CollArgs args);
Task reduce_scatter_gather(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
