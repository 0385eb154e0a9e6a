// Allgather through the node's shared memory: every rank deposits its block (by windows of
// NodeChannel::kWindow) and copies every other rank's out. Blocks up to sizeof(CallSlot::data)
// travel with the call records: agreeing on the call is the whole exchange. From 16 KiB, when
// every rank's send buffer is in a braid_mem_alloc region, each reads the others' in place.
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

Task allgather_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "allgather shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int me = ch.me();
  const size_t block = args.bytes();
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  auto place = [&](int s) { return recv + static_cast<size_t>(ch.world_rank(s)) * block; };
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // Larger blocks: the call describes this rank's send buffer, so that the others read it in
  // place where every rank's is a braid_mem_alloc region, or by single copy (allgather_direct).
  const DirectRefs refs = direct_refs(ch, args);
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs);
  // Nothing to copy in place. Each rank sends a block and receives n.
  const OwnBlock own{place(me), send, block,
                     ch.streams(CollKind::allgather, block * (ch.size() + 1))};
  CopyTimer timer(ch, block);
  co_await allgather_direct(ctx, ch, ticket, args, own, &timer.result);
  if (timer.result.ran) co_return;
  own.copy();
  constexpr size_t piece = NodeChannel::kWindow;
  auto len = [&](uint32_t k) { return std::min(piece, block - k * piece); };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(block, piece), true, std::move(sources),
      [&](uint32_t k, char *mine) {  // streamed in a slow spell of the link (DepositGauge)
        ch.deposit_gauge().deposit(
            len(k), [&](bool streamed) { copy_result(mine, send + k * piece, len(k), streamed); });
      },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < ch.size(); ++s)
          if (s != me) copy_result(place(s) + k * piece, buffer_of(s), len(k), own.streaming);
      });
}

}  // namespace braid::coll
