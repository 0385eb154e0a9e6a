// The broadcast algorithms; the selection table chooses among them by size and rank count.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task broadcast_binomial(CollContext &ctx, CollArgs args);
Task broadcast_scatter_allgather(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
