// Binomial gather: a rank collects the blocks of its subtree (virtual ranks [v, v + span)),
// contiguous in virtual order, and sends them to its parent in one message. log2(n) steps. The
// root rotates virtual order back into rank order.
#include <cstring>

#include "gather/algorithms.hpp"
#include "phases/tree.hpp"

namespace braid::coll {

Task gather_binomial(CollContext &ctx, CollArgs args) {
  const Tree tree(ctx.rank(), ctx.size(), args.root);
  const size_t block = args.bytes();
  const int end = tree.subtree_end();
  auto lease = ctx.scratch(block * static_cast<size_t>(end - tree.v));
  char *sub = lease.data();  // sub block i = virtual rank v + i's block
  std::memcpy(sub, args.sendbuf, block);
  for (int mask = 1; mask < tree.span() && tree.v + mask < tree.n; mask <<= 1) {
    const int child = tree.v + mask;
    const int child_end = child + mask < tree.n ? child + mask : tree.n;
    ctx.recv(tree.real(child), sub + static_cast<size_t>(mask) * block,
             static_cast<size_t>(child_end - child) * block, 0);
  }
  co_await ctx.wait_all();
  if (tree.v != 0) {
    co_await ctx.wait(ctx.send(tree.parent(), sub, static_cast<size_t>(end - tree.v) * block, 0));
    co_return;
  }
  char *dst = static_cast<char *>(args.recvbuf);
  for (int i = 0; i < tree.n; ++i)
    std::memcpy(dst + static_cast<size_t>(tree.real(i)) * block,
                sub + static_cast<size_t>(i) * block, block);
}

}  // namespace braid::coll
