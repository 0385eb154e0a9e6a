// Scatter + ring allgather broadcast (van de Geijn): the root's vector is cut into one block per
// rank and scattered down a binomial tree, then a ring allgather brings every block to every
// rank. Each rank sends and receives about 2x the vector regardless of the rank count, instead of
// log2(size)x for the binomial tree, which wins for large messages on 3+ ranks.
#include <algorithm>
#include <vector>

#include "broadcast/algorithms.hpp"
#include "engine/partition.hpp"

namespace braid::coll {

Task broadcast_scatter_allgather(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  if (n == 1) co_return;
  const int vrank = (ctx.rank() - args.root + n) % n;
  auto real = [&](int v) { return (v + args.root) % n; };
  const size_t es = args.elem_size;
  char *buf = static_cast<char *>(args.recvbuf);
  // Blocks are indexed by virtual rank; consecutive blocks are contiguous in the buffer.
  auto start = [&](int b) { return block_start(args.count, n, b) * es; };
  auto span_bytes = [&](int lo, int hi) { return start(std::min(hi, n)) - start(lo); };

  // Scatter: a rank receives the blocks of its subtree [vrank, vrank + lowbit(vrank)).
  int mask = 1;
  while (mask < n) {
    if (vrank & mask) {
      ctx.recv(real(vrank - mask), buf + start(vrank), span_bytes(vrank, vrank + mask), 0);
      co_await ctx.wait_all();
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = vrank + mask;
    if (child < n) ctx.send(real(child), buf + start(child), span_bytes(child, child + mask), 0);
  }
  // The scatter's sends read blocks the allgather would write again.
  co_await ctx.wait_all();

  // Ring allgather over virtual ranks: in step t, send block (v - t), receive block (v - t - 1).
  const int right = real((vrank + 1) % n);
  const int left = real((vrank - 1 + n) % n);
  auto block = [n](int x) { return ((x % n) + n) % n; };
  std::vector<OpId> recvs;
  for (int t = 0; t < n - 1; ++t) {
    const int b = block(vrank - t - 1);
    recvs.push_back(ctx.recv(left, buf + start(b), span_bytes(b, b + 1), 1 + t));
  }
  ctx.send(right, buf + start(vrank), span_bytes(vrank, vrank + 1), 1);
  for (int t = 0; t < n - 1; ++t) {
    co_await ctx.wait(recvs[t]);
    if (t < n - 2) {
      const int b = block(vrank - t - 1);
      ctx.send(right, buf + start(b), span_bytes(b, b + 1), 2 + t);
    }
  }
  co_await ctx.wait_all();
}

}  // namespace braid::coll
