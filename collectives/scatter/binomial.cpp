// Binomial scatter: the root sends each child the blocks of the child's subtree in one message
// (virtual order, so a subtree is contiguous), and every rank passes its children theirs.
// log2(n) steps.
#include <cstring>

#include "phases/tree.hpp"
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
  } else {
    co_await ctx.wait(ctx.recv(tree.parent(), sub, static_cast<size_t>(end - tree.v) * block, 0));
  }
  // Children from the largest subtree down, as the tree fans out.
  int mask = 1;
  while (mask < tree.span()) mask <<= 1;
  for (mask >>= 1; mask >= 1; mask >>= 1) {
    const int child = tree.v + mask;
    if (child >= tree.n || mask >= tree.span()) continue;
    const int child_end = child + mask < tree.n ? child + mask : tree.n;
    ctx.send(tree.real(child), sub + static_cast<size_t>(mask) * block,
             static_cast<size_t>(child_end - child) * block, 0);
  }
  if (args.recvbuf != sub) std::memcpy(args.recvbuf, sub, block);
  co_await ctx.wait_all();
}

}  // namespace braid::coll
