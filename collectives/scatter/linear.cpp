// Linear scatter: the root sends every rank its block directly. One step; the choice for large
// blocks.
#include <cstring>

#include "scatter/algorithms.hpp"

namespace braid::coll {

Task scatter_linear(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const size_t block = args.bytes();
  if (r != args.root) {
    co_await ctx.wait(ctx.recv(args.root, args.recvbuf, block, 0));
    co_return;
  }
  const auto *src = static_cast<const char *>(args.sendbuf);
  for (int s = 0; s < n; ++s)
    if (s != r) ctx.send(s, src + static_cast<size_t>(s) * block, block, 0);
  const char *own = src + static_cast<size_t>(r) * block;
  if (args.recvbuf != own) std::memmove(args.recvbuf, own, block);
  co_await ctx.wait_all();
}

}  // namespace braid::coll
