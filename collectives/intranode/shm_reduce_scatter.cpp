// Reduce-scatter through the node's shared memory: per window each rank deposits the next piece
// of every rank's block (its own too) in node_windows.hpp's pair layout, and each rank reduces
// its own pieces from every buffer, in local rank order, into recvbuf: every element is
// combined once, by the rank that keeps it. When a rank's whole vector fits in its call record
// (sizeof(CallSlot::data)), the records carry them; where the ranks can read each other's send
// buffers (braid_mem_alloc regions, or single copy), each reads its blocks straight from them. In
// place (recvbuf at this rank's block of sendbuf) works as is: a window's pieces are deposited
// before recvbuf's are written.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "intranode/call_check.hpp"
#include "intranode/direct.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/shm_algorithms.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Task reduce_scatter_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "reduce_scatter shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int n = ch.size(), me = ch.me();
  const size_t es = args.elem_size;
  const size_t block = args.bytes();
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  auto at = [&](int s) { return static_cast<size_t>(ch.world_rank(s)) * block; };
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // The call describes this rank's send buffer, so that each rank reads its block of it in
  // place where every rank's is a braid_mem_alloc region, or by single copy
  // (reduce_scatter_direct).
  const size_t all_bytes = block * static_cast<size_t>(n);
  DirectRefs refs;
  if (all_bytes >= kAllreduceSingleCopyMinBytes)
    refs.send = offer(ch, send, all_bytes, all_bytes, true);
  else if (all_bytes >= kDirectMinBytes)
    refs.send = shared_ref(send, all_bytes);
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs);
  CopyTimer timer(ch, all_bytes);
  co_await reduce_scatter_direct(ctx, ch, ticket, args, &timer.result);
  if (timer.result.ran) co_return;
  // out = in(0) op in(1) op ... in local rank order.
  auto combine = [&](char *out, size_t count, auto in) {
    reduce(out, in(0), in(1), count, args.dtype, args.op);
    for (int s = 2; s < n; ++s) reduce(out, out, in(s), count, args.dtype, args.op);
  };
  const size_t piece = pair_piece(n, es);
  auto len = [&](uint32_t k) { return std::min(piece, block - k * piece); };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(block, piece), true, std::move(sources),
      [&](uint32_t k, char *buf) {
        for (int d = 0; d < n; ++d) std::memcpy(buf + d * piece, send + at(d) + k * piece, len(k));
      },
      [&](uint32_t k, auto buffer_of) {
        combine(recv + k * piece, len(k) / es,
                [&](int s) -> const char * { return buffer_of(s) + me * piece; });
      });
}

}  // namespace braid::coll
