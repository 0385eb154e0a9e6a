// Ring reduce-scatter: each block travels once around the ring (phases/ring_reduce_scatter).
// Every rank sends and receives (n-1)/n of the input: bandwidth-optimal.
#include "phases/ring_reduce_scatter.hpp"
#include "reduce_scatter/algorithms.hpp"

namespace braid::coll {

Task reduce_scatter_ring(CollContext &ctx, CollArgs args) {
  const Blocks blocks = Blocks::uniform(args.bytes(), ctx.size());
  auto work = ctx.scratch(2 * args.bytes());
  co_await ring_reduce_scatter(ctx, static_cast<const char *>(args.sendbuf),
                               static_cast<char *>(args.recvbuf), blocks, args, work.data(), 0);
}

}  // namespace braid::coll
