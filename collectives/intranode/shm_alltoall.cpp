// Alltoall through the node's shared memory: per window each rank deposits, for every other
// rank d, the next piece of its block for d at d's place in its buffer (node_windows.hpp's
// pair layout), and copies its own pieces out of every other rank's buffer. Each rank's own
// block is copied directly. When all of a rank's blocks fit in its call record
// (sizeof(CallSlot::data)), agreeing on the call is the whole exchange. In place works as is:
// a window's pieces are deposited before the same places of recvbuf are written.
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
#include "kernels/stream_copy.hpp"

namespace braid::coll {

Task alltoall_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "alltoall shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int n = ch.size(), me = ch.me();
  const size_t block = args.bytes();
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  auto at = [&](int s) { return static_cast<size_t>(ch.world_rank(s)) * block; };
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // The call describes this rank's send buffer, so that the others read their blocks in place
  // where every rank's is a braid_mem_alloc region, or by single copy (alltoall_direct).
  const DirectRefs refs = direct_refs(ch, args);
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs);
  // Nothing to copy in place. Each rank sends and receives n blocks.
  const OwnBlock own{recv + at(me), send + at(me), block,
                     ch.streams(CollKind::alltoall, 2 * block * n)};
  CopyTimer timer(ch, block);
  co_await alltoall_direct(ctx, ch, ticket, args, own, &timer.result);
  if (timer.result.ran) co_return;
  own.copy();
  const size_t piece = pair_piece(n, args.elem_size);
  auto len = [&](uint32_t k) { return std::min(piece, block - k * piece); };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(block, piece), true, std::move(sources),
      [&](uint32_t k, char *buf) {  // streamed in a slow spell of the link (DepositGauge)
        auto copy = [&](bool streamed) {
          for (int d = 0; d < n; ++d)
            if (d != me) copy_result(buf + d * piece, send + at(d) + k * piece, len(k), streamed);
        };
        ch.deposit_gauge().deposit(len(k) * static_cast<size_t>(n - 1), copy);
      },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < n; ++s)
          if (s != me)
            copy_result(recv + at(s) + k * piece, buffer_of(s) + me * piece, len(k), own.streaming);
      });
}

}  // namespace braid::coll
