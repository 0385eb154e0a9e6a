// The allreduce algorithms; the selection table chooses among them by size and rank count.
#pragma once

#include "engine/coll_args.hpp"

namespace braid::coll {

Task allreduce_recursive_doubling(CollContext &ctx, CollArgs args);
Task allreduce_rabenseifner(CollContext &ctx, CollArgs args);
Task allreduce_ring(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
