// Bruck allgather: ceil(log2(n)) steps for any n. In step k a rank sends the 2^k blocks it has
// (its own and the following ones, in rotated order) to rank - 2^k and receives as many from
// rank + 2^k. Blocks are gathered rotated (this rank's first) in scratch and put in rank order
// at the end. The latency choice for small blocks.
#include <algorithm>
#include <cstring>

#include "allgather/algorithms.hpp"

namespace braid::coll {

Task allgather_bruck(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const size_t block = args.bytes();
  auto tmp = ctx.scratch(block * static_cast<size_t>(n));
  char *rot = tmp.data();  // rot block i = rank (r + i) mod n's block
  if (block > 0) std::memcpy(rot, args.sendbuf, block);
  uint32_t step = 0;
  for (int have = 1; have < n; have *= 2, ++step) {
    const int move = std::min(have, n - have);
    const int to = (r - have + n) % n;
    const int from = (r + have) % n;
    ctx.recv(from, rot + static_cast<size_t>(have) * block, static_cast<size_t>(move) * block,
             step);
    ctx.send(to, rot, static_cast<size_t>(move) * block, step);
    co_await ctx.wait_all();
  }
  char *dst = static_cast<char *>(args.recvbuf);
  for (int i = 0; i < n; ++i) {
    char *out = dst + static_cast<size_t>((r + i) % n) * block;
    if (block > 0 && out != rot + static_cast<size_t>(i) * block)
      std::memcpy(out, rot + static_cast<size_t>(i) * block, block);
  }
}

}  // namespace braid::coll
