// Dissemination barrier: in round k each rank signals rank + 2^k and waits for rank - 2^k, so
// after ceil(log2(size)) rounds every rank has heard, directly or not, from every other.
#include "barrier/barrier.hpp"

namespace braid::coll {

Task barrier_dissemination(CollContext &ctx, CollArgs) {
  const int n = ctx.size();
  const int r = ctx.rank();
  static char token;  // zero-byte messages still need a valid address for some transports
  uint32_t step = 0;
  for (int k = 1; k < n; k <<= 1, ++step) {
    ctx.recv((r - k + n) % n, &token, 0, step);
    ctx.send((r + k) % n, &token, 0, step);
    co_await ctx.wait_all();
  }
}

}  // namespace braid::coll
