// The reduce-scatter algorithms: every rank's sendbuf holds n blocks of `count` elements; rank
// r's recvbuf gets the reduction of every rank's block r.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task reduce_scatter_ring(CollContext &ctx, CollArgs args);
Task reduce_scatter_recursive_halving(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
