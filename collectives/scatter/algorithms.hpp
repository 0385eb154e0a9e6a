// The scatter algorithms: `count` is one rank's block; the root's sendbuf holds n blocks in rank
// order.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task scatter_binomial(CollContext &ctx, CollArgs args);
Task scatter_linear(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
