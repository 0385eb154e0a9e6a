#include "phases/binomial_scatter.hpp"

#include <algorithm>

namespace braid::coll {

Task binomial_scatter(CollContext &ctx, const Tree &tree, char *sub, const Blocks &blocks,
                      uint32_t step) {
  const int n = tree.n;
  auto at = [&](int b) {  // bytes from block 0 to block b (b == n: the end)
    const auto i = static_cast<size_t>(b);
    return b < n ? blocks.off[i] : blocks.off[i - 1] + blocks.len[i - 1];
  };
  const size_t base = at(tree.v);
  if (tree.v != 0)
    co_await ctx.wait(ctx.recv(tree.parent(), sub, at(tree.subtree_end()) - base, step));
  int mask = 1;
  while (mask < tree.span()) mask <<= 1;
  for (mask >>= 1; mask >= 1; mask >>= 1) {
    const int child = tree.v + mask;
    if (child >= n) continue;
    const int child_end = std::min(child + mask, n);
    ctx.send(tree.real(child), sub + (at(child) - base), at(child_end) - at(child), step);
  }
  co_await ctx.wait_all();
}

}  // namespace braid::coll
