// Binomial-tree reduce: a rank combines the partial results of its children's subtrees, in
// increasing virtual rank, into its own and sends the result to its parent. log2(n) steps with
// the whole vector: the latency choice. The combination order is fixed by the tree, so the
// root's bits do not depend on timing.
#include <cstring>

#include "kernels/reduce_kernels.hpp"
#include "phases/tree.hpp"
#include "reduce/algorithms.hpp"

namespace braid::coll {

Task reduce_binomial(CollContext &ctx, CollArgs args) {
  const Tree tree(ctx.rank(), ctx.size(), args.root);
  const size_t bytes = args.bytes();
  const bool is_root = tree.v == 0;
  // The partial result: the root's output, a scratch buffer elsewhere.
  auto mine = ctx.scratch(is_root ? 0 : bytes);
  char *acc = is_root ? static_cast<char *>(args.recvbuf) : mine.data();
  if (acc != args.sendbuf) std::memcpy(acc, args.sendbuf, bytes);
  auto incoming = ctx.scratch(bytes);
  for (int mask = 1; mask < tree.span() && tree.v + mask < tree.n; mask <<= 1) {
    co_await ctx.wait(ctx.recv(tree.real(tree.v + mask), incoming.data(), bytes, 1));
    // This rank's subtree part first (lower virtual ranks), then the child's.
    reduce(acc, acc, incoming.data(), args.count, args.dtype, args.op);
  }
  if (!is_root) co_await ctx.wait(ctx.send(tree.parent(), acc, bytes, 1));
}

}  // namespace braid::coll
