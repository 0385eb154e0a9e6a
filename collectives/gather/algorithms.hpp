// The gather algorithms: `count` is one rank's block; the root's recvbuf holds n blocks in rank
// order.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task gather_binomial(CollContext &ctx, CollArgs args);
Task gather_linear(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
