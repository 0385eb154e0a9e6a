#include "allreduce/fold.hpp"

#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Fold make_fold(int rank, int size) {
  Fold f;
  while (f.pof2 * 2 <= size) f.pof2 *= 2;
  f.rem = size - f.pof2;
  if (rank < 2 * f.rem)
    f.newrank = (rank % 2 == 1) ? rank / 2 : -1;
  else
    f.newrank = rank - f.rem;
  return f;
}

Task fold_in(CollContext &ctx, const CollArgs &args, Fold fold, char *buf, char *tmp) {
  const int rank = ctx.rank();
  if (rank >= 2 * fold.rem) co_return;
  if (rank % 2 == 0) {
    ctx.send(rank + 1, buf, args.bytes(), kFoldInStep);
  } else {
    ctx.recv(rank - 1, tmp, args.bytes(), kFoldInStep);
    co_await ctx.wait_all();
    // The lower rank's data is always the left operand, so every rank reduces alike.
    reduce(buf, tmp, buf, args.count, args.dtype, args.op);
  }
  co_await ctx.wait_all();
}

Task fold_out(CollContext &ctx, const CollArgs &args, Fold fold, char *buf) {
  const int rank = ctx.rank();
  if (rank >= 2 * fold.rem) co_return;
  if (rank % 2 == 0)
    ctx.recv(rank + 1, buf, args.bytes(), kFoldOutStep);
  else
    ctx.send(rank - 1, buf, args.bytes(), kFoldOutStep);
  co_await ctx.wait_all();
}

}  // namespace braid::coll
