// Binomial scatter: the root lays the blocks out in virtual order (so a subtree is contiguous)
// and the binomial scatter phase (phases/binomial_scatter.hpp) carries them down the tree.
#include <cstring>

#include "phases/binomial_scatter.hpp"
#include "scatter/algorithms.hpp"

namespace braid::coll {

Task scatter_binomial(CollContext &ctx, CollArgs args) {
  const Tree tree(ctx.rank(), ctx.size(), args.root);
  const size_t block = args.bytes();
  const int end = tree.subtree_end();
  auto lease = ctx.scratch(block * static_cast<size_t>(end - tree.v));
  char *sub = lease.data();  // sub block i = virtual rank v + i's block
  if (tree.v == 0) {
    const auto *src = static_cast<const char *>(args.sendbuf);
    for (int i = 0; i < tree.n; ++i)
      std::memcpy(sub + static_cast<size_t>(i) * block,
                  src + static_cast<size_t>(tree.real(i)) * block, block);
  }
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  const Blocks blocks = Blocks::uniform(block, tree.n);
  co_await binomial_scatter(ctx, tree, sub, blocks, 0);
  if (args.recvbuf != sub) std::memcpy(args.recvbuf, sub, block);
}

}  // namespace braid::coll
