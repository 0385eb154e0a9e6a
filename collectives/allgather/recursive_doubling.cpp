// Recursive-doubling allgather for power-of-two rank counts: in step k a rank swaps everything
// it has (2^k blocks, contiguous in rank order) with rank XOR 2^k. log2(n) steps and no final
// reordering. Other rank counts use Bruck.
#include "allgather/algorithms.hpp"

namespace braid::coll {

Task allgather_recursive_doubling(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  if ((n & (n - 1)) != 0) {
    co_await allgather_bruck(ctx, args);
    co_return;
  }
  const int r = ctx.rank();
  const size_t block = args.bytes();
  char *dst = static_cast<char *>(args.recvbuf);
  place_own_block(args, r, static_cast<size_t>(r) * block, block);
  uint32_t step = 0;
  for (int mask = 1; mask < n; mask <<= 1, ++step) {
    const int peer = r ^ mask;
    const int mine = r & ~(mask - 1);  // first block this rank has
    const int theirs = peer & ~(mask - 1);
    ctx.recv(peer, dst + static_cast<size_t>(theirs) * block, static_cast<size_t>(mask) * block,
             step);
    ctx.send(peer, dst + static_cast<size_t>(mine) * block, static_cast<size_t>(mask) * block,
             step);
    co_await ctx.wait_all();
  }
}

}  // namespace braid::coll
