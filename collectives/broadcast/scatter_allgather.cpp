// Scatter + ring allgather broadcast (van de Geijn): the root's vector is cut into one block per
// rank and scattered down a binomial tree, then a ring allgather brings every block to every
// rank. Each rank sends and receives about 2x the vector regardless of the rank count, instead of
// log2(size)x for the binomial tree, which wins for large messages on 3+ ranks. Both are the
// shared phases, over virtual ranks (the root is 0): block b of the vector is virtual rank b's.
#include "broadcast/algorithms.hpp"
#include "phases/binomial_scatter.hpp"
#include "phases/ring_allgather.hpp"

namespace braid::coll {

Task broadcast_scatter_allgather(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  if (n == 1) co_return;
  char *buf = static_cast<char *>(args.recvbuf);
  const Tree tree(ctx.rank(), n, args.root);
  const Blocks blocks = Blocks::even(args.count, n, args.elem_size);
  co_await binomial_scatter(ctx, tree, buf + blocks.off[static_cast<size_t>(tree.v)], blocks, 0);
  // The scatter's sends (read from blocks the allgather writes again) are done: the phase
  // waited for them.
  co_await ring_allgather(ctx, buf, blocks, args.root, 1);
}

}  // namespace braid::coll
