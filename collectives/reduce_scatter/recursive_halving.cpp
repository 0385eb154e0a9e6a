// Recursive-halving reduce-scatter for power-of-two rank counts: in step k a rank keeps the
// half of its current range that holds its own block, sends the other half to rank XOR
// (n / 2^(k+1)) and reduces the half it receives into what it keeps. log2(n) steps; each block
// is reduced in a fixed order (the lower rank's partial result on the left). Other rank
// counts use the ring.
#include <cstring>

#include "kernels/reduce_kernels.hpp"
#include "reduce_scatter/algorithms.hpp"

namespace braid::coll {

Task reduce_scatter_recursive_halving(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  if ((n & (n - 1)) != 0) {
    co_await reduce_scatter_ring(ctx, args);
    co_return;
  }
  const int r = ctx.rank();
  const size_t block = args.bytes();
  const size_t total = block * static_cast<size_t>(n);
  // The partial results, in rank order of blocks; starts as this rank's input.
  auto acc = ctx.scratch(total);
  auto incoming = ctx.scratch(total / 2);
  std::memcpy(acc.data(), args.sendbuf, total);
  int lo = 0, hi = n;  // the blocks this rank still holds partial results for
  uint32_t step = 0;
  for (int half = n / 2; half >= 1; half /= 2, ++step) {
    const int peer = r ^ half;
    const int mid = lo + half;
    const bool keep_low = r < mid;
    const int send_lo = keep_low ? mid : lo;
    const int keep_lo = keep_low ? lo : mid;
    const size_t bytes = static_cast<size_t>(half) * block;
    ctx.send(peer, acc.data() + static_cast<size_t>(send_lo) * block, bytes, step);
    ctx.recv(peer, incoming.data(), bytes, step);
    co_await ctx.wait_all();
    char *kept = acc.data() + static_cast<size_t>(keep_lo) * block;
    const size_t count = args.count * static_cast<size_t>(half);
    // The lower rank's partial result on the left, so every block's order is fixed.
    if (r < peer)
      reduce(kept, kept, incoming.data(), count, args.dtype, args.op);
    else
      reduce(kept, incoming.data(), kept, count, args.dtype, args.op);
    lo = keep_lo;
    hi = keep_lo + half;
  }
  (void)hi;
  std::memcpy(args.recvbuf, acc.data() + static_cast<size_t>(r) * block, block);
}

}  // namespace braid::coll
