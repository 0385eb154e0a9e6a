// Rabenseifner allreduce: a reduce-scatter by recursive halving followed by an allgather by
// recursive doubling. Each rank moves about 2x the vector in total instead of log2(size)x, which
// wins for medium messages. The vector is cut into pof2 blocks; in every halving round each
// block is reduced on exactly one rank, lower core rank's data first, so results are identical.
#include <cstring>
#include <vector>

#include "allreduce/algorithms.hpp"
#include "allreduce/fold.hpp"
#include "engine/partition.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
Task allreduce_rabenseifner(CollContext &ctx, CollArgs args) {
  const size_t es = args.elem_size;
  char *buf = static_cast<char *>(args.recvbuf);
  if (!args.in_place()) std::memcpy(buf, args.sendbuf, args.bytes());
  if (ctx.size() == 1) co_return;
  auto tmp = ctx.scratch(args.bytes());
  const Fold fold = make_fold(ctx.rank(), ctx.size());
  co_await fold_in(ctx, args, fold, buf, tmp.data());

  if (fold.newrank >= 0) {
    const int me = fold.newrank;
    auto start = [&](int b) { return block_start(args.count, fold.pof2, b); };
    uint32_t step = 1;
    int lo = 0;
    int hi = fold.pof2;
    // Reduce-scatter: halve the block range each round; keep the half named by my bit.
    for (int mask = fold.pof2 / 2; mask >= 1; mask >>= 1, ++step) {
      const int partner = me ^ mask;
      const int peer = fold.real(partner);
      const int mid = lo + (hi - lo) / 2;
      const bool lower = me < partner;
      const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
      const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
      const size_t keep_count = start(keep_hi) - start(keep_lo);
      char *keep = buf + start(keep_lo) * es;
      ctx.recv(peer, tmp.data(), keep_count * es, step);
      ctx.send(peer, buf + start(give_lo) * es, (start(give_hi) - start(give_lo)) * es, step);
      co_await ctx.wait_all();
      if (lower)
        reduce(keep, keep, tmp.data(), keep_count, args.dtype, args.op);
      else
        reduce(keep, tmp.data(), keep, keep_count, args.dtype, args.op);
      lo = keep_lo;
      hi = keep_hi;
    }
    // Allgather: double the owned block range each round.
    for (int mask = 1; mask < fold.pof2; mask <<= 1, ++step) {
      const int partner = me ^ mask;
      const int peer = fold.real(partner);
      const int their_lo = partner < me ? lo - mask : hi;
      const int their_hi = their_lo + mask;
      ctx.recv(peer, buf + start(their_lo) * es, (start(their_hi) - start(their_lo)) * es, step);
      ctx.send(peer, buf + start(lo) * es, (start(hi) - start(lo)) * es, step);
      co_await ctx.wait_all();
      lo = std::min(lo, their_lo);
      hi = std::max(hi, their_hi);
    }
  }
  co_await fold_out(ctx, args, fold, buf);
}

}  // namespace braid::coll
