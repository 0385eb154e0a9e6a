// Linear gather: every rank sends its block straight to the root, which posts every receive at
// once. One step; the root's link carries everything: the choice for large blocks.
#include <cstring>

#include "gather/algorithms.hpp"

namespace braid::coll {

Task gather_linear(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const size_t block = args.bytes();
  if (r != args.root) {
    co_await ctx.wait(ctx.send(args.root, args.sendbuf, block, 0));
    co_return;
  }
  char *dst = static_cast<char *>(args.recvbuf);
  for (int s = 0; s < n; ++s)
    if (s != r) ctx.recv(s, dst + static_cast<size_t>(s) * block, block, 0);
  char *own = dst + static_cast<size_t>(r) * block;
  if (args.sendbuf != own) std::memcpy(own, args.sendbuf, block);
  co_await ctx.wait_all();
}

}  // namespace braid::coll
