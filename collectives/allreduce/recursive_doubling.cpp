// Recursive doubling allreduce: log2(size) rounds, each exchanging the whole vector with the
// partner whose core rank differs in one bit. Lowest latency for small messages. Both partners
// reduce (lower core rank's data, higher core rank's data) in that order, so every rank ends up
// with identical bits.
#include <cstring>
#include <vector>

#include "allreduce/algorithms.hpp"
#include "allreduce/fold.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Task allreduce_recursive_doubling(CollContext &ctx, CollArgs args) {
  const size_t bytes = args.bytes();
  char *buf = static_cast<char *>(args.recvbuf);
  if (!args.in_place()) std::memcpy(buf, args.sendbuf, bytes);
  if (ctx.size() == 1) co_return;
  auto tmp = ctx.scratch(bytes);
  const Fold fold = make_fold(ctx.rank(), ctx.size());
  co_await fold_in(ctx, args, fold, buf, tmp.data());
  if (fold.newrank >= 0) {
    uint32_t step = 1;
    for (int mask = 1; mask < fold.pof2; mask <<= 1, ++step) {
      const int partner = fold.newrank ^ mask;
      const int peer = fold.real(partner);
      ctx.recv(peer, tmp.data(), bytes, step);
      ctx.send(peer, buf, bytes, step);
      co_await ctx.wait_all();
      if (partner < fold.newrank)
        reduce(buf, tmp.data(), buf, args.count, args.dtype, args.op);
      else
        reduce(buf, buf, tmp.data(), args.count, args.dtype, args.op);
    }
  }
  co_await fold_out(ctx, args, fold, buf);
}

}  // namespace braid::coll
