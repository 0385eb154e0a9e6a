// Pairwise exchange: in step s a rank sends to rank + s and receives from rank - s, so every
// rank talks to one peer per step and no link carries two messages at once. In place
// (sendbuf == recvbuf), the input is copied to scratch first: a block may not be overwritten
// before it has been sent.
#include <cstring>

#include "alltoall/algorithms.hpp"
#include "engine/v_counts.hpp"
#include "phases/blocks.hpp"

namespace braid::coll {
namespace {

// How many steps may be in flight at once: enough to keep the transport busy, few enough that
// a rank does not flood one peer's unexpected-message queue.
constexpr int kWindow = 4;

Task pairwise(CollContext &ctx, const char *src, const Blocks &out_blocks, const Blocks &in_blocks,
              char *dst) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const auto me = static_cast<size_t>(r);
  if (in_blocks.len[me] > 0 && dst + in_blocks.off[me] != src + out_blocks.off[me])
    std::memcpy(dst + in_blocks.off[me], src + out_blocks.off[me], in_blocks.len[me]);
  for (int s = 1; s < n; ++s) {
    const int to = (r + s) % n, from = (r - s + n) % n;
    ctx.recv(from, dst + in_blocks.off[static_cast<size_t>(from)],
             in_blocks.len[static_cast<size_t>(from)], 0);
    ctx.send(to, src + out_blocks.off[static_cast<size_t>(to)],
             out_blocks.len[static_cast<size_t>(to)], 0);
    if (s % kWindow == 0) co_await ctx.wait_all();
  }
  co_await ctx.wait_all();
}

}  // namespace

Task alltoall_pairwise(CollContext &ctx, CollArgs args) {
  const size_t total = args.bytes() * static_cast<size_t>(ctx.size());
  const Blocks blocks = Blocks::uniform(args.bytes(), ctx.size());
  auto copy = ctx.scratch(args.in_place() ? total : 0);
  const char *src = static_cast<const char *>(args.sendbuf);
  if (args.in_place()) {
    std::memcpy(copy.data(), src, total);
    src = copy.data();
  }
  co_await pairwise(ctx, src, blocks, blocks, static_cast<char *>(args.recvbuf));
}

Task alltoallv_pairwise(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const Blocks out = Blocks::of(args.counts, args.displs, n, args.elem_size);
  // Rank `peer` sends this rank its block for it, sized by its sendcounts.
  ctx.on_size_mismatch(
      [r = ctx.rank(), es = args.elem_size](int peer, uint32_t, size_t got, size_t expected) {
        return v_count_text(r, "recvcounts", peer, expected / es,
                            detail::cat("rank ", peer, "'s sendcounts[", r, "]"),
                            got == CollContext::kLonger ? "more" : detail::cat(got / es));
      });
  const Blocks in = Blocks::of(args.recv_counts, args.recv_displs, n, args.elem_size);
  co_await pairwise(ctx, static_cast<const char *>(args.sendbuf), out, in,
                    static_cast<char *>(args.recvbuf));
}

}  // namespace braid::coll
