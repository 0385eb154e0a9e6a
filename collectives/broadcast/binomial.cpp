// Binomial tree broadcast: in round k every rank that has the data sends it 2^k ranks further,
// so all ranks have it after ceil(log2(size)) rounds. Ranks are renumbered relative to the root.
#include "broadcast/algorithms.hpp"

namespace braid::coll {

Task broadcast_binomial(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int vrank = (ctx.rank() - args.root + n) % n;
  auto real = [&](int v) { return (v + args.root) % n; };
  char *buf = static_cast<char *>(args.recvbuf);
  int mask = 1;
  // A non-root receives from the rank that differs in its lowest set bit.
  while (mask < n) {
    if (vrank & mask) {
      ctx.recv(real(vrank - mask), buf, args.bytes(), 0);
      co_await ctx.wait_all();
      break;
    }
    mask <<= 1;
  }
  // Then it forwards to the subtrees below that bit, largest first.
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vrank + mask < n) ctx.send(real(vrank + mask), buf, args.bytes(), 0);
  co_await ctx.wait_all();
}

}  // namespace braid::coll
