#include "phases/ring_allgather.hpp"

#include <vector>

namespace braid::coll {

Task ring_allgather(CollContext &ctx, char *buf, const Blocks &blocks, int shift, uint32_t step0) {
  const int n = ctx.size();
  if (n == 1) co_return;
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  const int v = mod(ctx.rank() - shift);
  const int right = mod(ctx.rank() + 1);
  const int left = mod(ctx.rank() - 1);
  auto block = [&](int b) { return buf + blocks.off[static_cast<size_t>(b)]; };
  auto bytes = [&](int b) { return blocks.len[static_cast<size_t>(b)]; };
  // Every receive is posted up front, so no message waits for a buffer.
  std::vector<OpId> recvs;
  for (int t = 0; t < n - 1; ++t) {
    const int b = mod(v - t - 1);
    recvs.push_back(ctx.recv(left, block(b), bytes(b), step0 + static_cast<uint32_t>(t)));
  }
  ctx.send(right, block(v), bytes(v), step0);
  for (int t = 0; t < n - 2; ++t) {
    co_await ctx.wait(recvs[static_cast<size_t>(t)]);
    const int b = mod(v - t - 1);
    ctx.send(right, block(b), bytes(b), step0 + static_cast<uint32_t>(t) + 1);
  }
  co_await ctx.wait_all();
}

}  // namespace braid::coll
