// Ring allgather: n-1 steps, each rank forwarding the block it received last. Every rank sends
// and receives (n-1)/n of the result: bandwidth-optimal for large blocks.
#include <cstring>

#include "allgather/algorithms.hpp"
#include "phases/ring_allgather.hpp"

namespace braid::coll {

void place_own_block(const CollArgs &args, int rank, size_t offset, size_t bytes) {
  (void)rank;
  char *dst = static_cast<char *>(args.recvbuf) + offset;
  if (args.sendbuf != dst && bytes > 0) std::memcpy(dst, args.sendbuf, bytes);
}

Task allgather_ring(CollContext &ctx, CollArgs args) {
  const Blocks blocks = Blocks::uniform(args.bytes(), ctx.size());
  place_own_block(args, ctx.rank(), blocks.off[static_cast<size_t>(ctx.rank())], args.bytes());
  co_await ring_allgather(ctx, static_cast<char *>(args.recvbuf), blocks, 0, 0);
}

Task allgatherv_ring(CollContext &ctx, CollArgs args) {
  const Blocks blocks = Blocks::of(args.counts, args.displs, ctx.size(), args.elem_size);
  const auto me = static_cast<size_t>(ctx.rank());
  place_own_block(args, ctx.rank(), blocks.off[me], blocks.len[me]);
  co_await ring_allgather(ctx, static_cast<char *>(args.recvbuf), blocks, 0, 0);
}

}  // namespace braid::coll
