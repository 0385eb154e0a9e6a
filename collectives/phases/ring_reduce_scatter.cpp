#include "phases/ring_reduce_scatter.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Task ring_reduce_scatter(CollContext &ctx, const char *src, char *out, const Blocks &blocks,
                         const CollArgs &args, char *work, uint32_t step0) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const size_t es = args.elem_size;
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  if (n == 1) {
    if (out != src + blocks.off[0]) std::memmove(out, src + blocks.off[0], blocks.len[0]);
    co_return;
  }
  size_t largest = 0;
  for (size_t len : blocks.len) largest = std::max(largest, len);
  // Two halves: the partial result being sent and the one being received alternate.
  char *half[2] = {work, work + largest};
  const int right = mod(r + 1), left = mod(r - 1);
  // Step 0 sends this rank's own contribution to block r-1 straight from the input.
  int c = mod(r - 1);
  OpId sent = ctx.send(right, src + blocks.off[static_cast<size_t>(c)],
                       blocks.len[static_cast<size_t>(c)], step0);
  for (int s = 0; s <= n - 2; ++s) {
    const int b = mod(r - s - 2);  // the block arriving now
    const size_t len = blocks.len[static_cast<size_t>(b)];
    char *in = half[s % 2];
    co_await ctx.wait(ctx.recv(left, in, len, step0 + static_cast<uint32_t>(s)));
    const char *mine = src + blocks.off[static_cast<size_t>(b)];
    if (s == n - 2) {
      // The last arrival is this rank's own block: the result.
      co_await ctx.wait(sent);
      reduce(out, in, mine, len / es, args.dtype, args.op);
      break;
    }
    // The half sent in the previous step is written again two steps on: that send must be
    // done before this one's result replaces it.
    co_await ctx.wait(sent);
    reduce(in, in, mine, len / es, args.dtype, args.op);
    sent = ctx.send(right, in, len, step0 + static_cast<uint32_t>(s) + 1);
  }
  co_await ctx.wait_all();
}

}  // namespace braid::coll
