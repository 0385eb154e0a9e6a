// Reduce for large vectors: a ring reduce-scatter leaves each rank with the reduction of one
// block, then every rank sends its block straight to the root. Each rank sends about the
// vector once instead of log2(n) times.
#include <algorithm>
#include <vector>

#include "phases/ring_reduce_scatter.hpp"
#include "reduce/algorithms.hpp"

namespace braid::coll {

Task reduce_scatter_gather(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const Blocks blocks = Blocks::even(args.count, n, args.elem_size);
  size_t largest = 0;
  for (size_t len : blocks.len) largest = std::max(largest, len);
  const bool is_root = r == args.root;
  // The root's reduced block goes straight to its place in the output; the others' to scratch.
  auto own = ctx.scratch(is_root ? 0 : largest);
  char *out =
      is_root ? static_cast<char *>(args.recvbuf) + blocks.off[static_cast<size_t>(r)] : own.data();
  auto work = ctx.scratch(2 * largest);
  co_await ring_reduce_scatter(ctx, static_cast<const char *>(args.sendbuf), out, blocks, args,
                               work.data(), 1);
  if (!is_root) {
    co_await ctx.wait(ctx.send(args.root, out, blocks.len[static_cast<size_t>(r)], 0));
    co_return;
  }
  char *dst = static_cast<char *>(args.recvbuf);
  for (int s = 0; s < n; ++s)
    if (s != r)
      ctx.recv(s, dst + blocks.off[static_cast<size_t>(s)], blocks.len[static_cast<size_t>(s)], 0);
  co_await ctx.wait_all();
}

}  // namespace braid::coll
