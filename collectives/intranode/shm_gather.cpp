// Gather through the node's shared memory: every rank deposits its block (by windows of
// NodeChannel::kWindow) and the root copies each out. Blocks up to sizeof(CallSlot::data)
// travel with the call records: agreeing on the call is the whole exchange.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "intranode/call_check.hpp"
#include "intranode/direct.hpp"
#include "intranode/direct_steps.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/shm_algorithms.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/stream_copy.hpp"

namespace braid::coll {

namespace {

// Whether the others deposit their blocks into the windows with streaming stores, as the root
// decides (they return before it has read, so only its time shows what their stores cost it):
// in a slow spell of the core-to-core link ordinary stores into lines the root has read are
// the bottleneck (docs/intranode.md, "Deposits into the windows"). Blocks smaller than a window
// always stream, as a reduce's (shm_reduce.cpp); from a window the root times both ways, since
// on a fast day its copies take ordinary stores from the writer's cache faster.
bool deposits_streamed(NodeChannel &ch, size_t block) {
  return block < NodeChannel::kWindow || ch.streams_deposits(CollKind::gather, block);
}

}  // namespace

Task gather_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "gather shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int me = ch.me();
  const int root = ch.map().local_index[args.root];
  const size_t block = args.bytes();
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  auto place = [&](int s) { return recv + static_cast<size_t>(ch.world_rank(s)) * block; };
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    // Off the root: hand the block over with the record; nothing comes back.
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // Larger blocks: the call describes this rank's send buffer, so that the root reads the
  // others' in place where they are braid_mem_alloc regions, or by single copy (gather_direct).
  // The root reads, and answers with its own reference: CMA when it wants single copy.
  DirectRefs refs;
  // The copy path first: whether it retries its other way this turn holds the stream choices.
  const bool single = me == root && ch.cma_offered(block) && ch.want_single(block);
  // Each rank sends a block and the root receives n: two blocks a rank on average.
  const bool streams = me == root && ch.streams(CollKind::gather, 2 * block);
  if (me != root) {
    refs.send = offer(ch, send, block, block, false);
  } else if (single) {
    refs.send = cma_ref(send);
  } else {
    refs.streamed_deposits = deposits_streamed(ch, block);
  }
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs);
  const OwnBlock own{me == root ? place(me) : nullptr, send, me == root ? block : 0, streams};
  CopyTimer timer(ch, block);
  co_await gather_direct(ctx, ch, ticket, args, root, own, &timer.result);
  // On shared cores the root judges the windows and single copy by the whole call: with single
  // copy the others wait for its reads, with the windows they deposit and leave, and its own
  // time shows neither (4 ranks on 2 cores, AMD host: single copy chosen at 16-128 KiB, 1.4-1.8x
  // Open MPI's time). A reduce's root does the same (shm_reduce.cpp).
  timer.result.weighs_call = !timer.result.ran || timer.result.single;
  if (timer.result.ran) {
    ch.deposits_not_made();
    co_return;
  }
  own.copy();
  const bool streamed = refs_of(ch, root, ticket).streamed_deposits;
  constexpr size_t piece = NodeChannel::kWindow;
  auto len = [&](uint32_t k) { return std::min(piece, block - k * piece); };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources;  // the root reads every other rank's buffer
  if (me == root) sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(block, piece), me != root, std::move(sources),
      [&](uint32_t k, char *mine) { copy_result(mine, send + k * piece, len(k), streamed); },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < ch.size(); ++s)
          if (s != me) copy_result(place(s) + k * piece, buffer_of(s), len(k), own.streaming);
      });
}

}  // namespace braid::coll
