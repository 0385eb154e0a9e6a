// Ring allgather: n-1 steps, each rank forwarding the block it received last. Every rank sends
// and receives (n-1)/n of the result: bandwidth-optimal for large blocks.
#include <cstring>

#include "allgather/algorithms.hpp"
#include "engine/v_counts.hpp"
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
  // Step t brings block (rank - t - 1) mod n from the left neighbour, sized by its recvcounts
  // (its sendcount when the block is its own).
  ctx.on_size_mismatch([n = ctx.size(), r = ctx.rank(), es = args.elem_size](
                           int peer, uint32_t step, size_t got, size_t expected) {
    const int b = ((r - static_cast<int>(step) - 1) % n + n) % n;
    return v_count_text(r, "recvcounts", b, expected / es,
                        b == peer ? detail::cat("rank ", peer, "'s sendcount")
                                  : detail::cat("rank ", peer, "'s recvcounts[", b, "]"),
                        got == CollContext::kLonger ? "more" : detail::cat(got / es));
  });
  place_own_block(args, ctx.rank(), blocks.off[me], blocks.len[me]);
  co_await ring_allgather(ctx, static_cast<char *>(args.recvbuf), blocks, 0, 0);
}

}  // namespace braid::coll
