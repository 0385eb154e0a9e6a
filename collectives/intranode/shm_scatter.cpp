// Scatter through the node's shared memory: per window the root deposits, for every other rank
// d, the next piece of d's block at d's place in its buffer (node_windows.hpp's pair layout)
// and each rank copies its piece out. When the root's whole buffer fits in its call record
// (sizeof(CallSlot::data)), agreeing on the call is the whole exchange.
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

Task scatter_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "scatter shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int n = ch.size(), me = ch.me();
  const int root = ch.map().local_index[args.root];
  const size_t block = args.bytes();
  const auto *send = static_cast<const char *>(args.sendbuf);  // null off the root
  auto *recv = static_cast<char *>(args.recvbuf);
  auto at = [&](int s) { return static_cast<size_t>(ch.world_rank(s)) * block; };
  const size_t all = block * static_cast<size_t>(n);
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    // The root hands the blocks over with its record; nothing comes back.
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  const bool is_root = me == root;
  // The root's call describes its send buffer, so that the others read their blocks in place
  // where it is a braid_mem_alloc region, or by single copy (scatter_direct).
  DirectRefs refs;
  if (is_root && !args.entered) co_await wait_for_slot(ctx, ch, ticket);
  if (is_root) refs.send = offer_root_buffer(ch, args.kind, send, all, block);
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs, is_root ? kNobody : root,
                         is_root ? kEveryone : kNobody);
  if (const SharedRef r = refs_of(ch, root, ticket).send; r.valid() && !r.cma())
    co_await agree_with_everyone(ctx, ch, ticket);  // before the mapped path's agreement step
  CopyTimer timer(ch, block);
  co_await scatter_direct(ctx, ch, ticket, args, root, &timer.result);
  if (timer.result.ran) co_return;  // the root's own block copied there too
  const size_t piece = pair_piece(n, args.elem_size);
  auto len = [&](uint32_t k) { return std::min(piece, block - k * piece); };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources;  // the others read the root's buffer
  if (!is_root) sources.push_back(root);
  co_await node_windows(
      ctx, ch, windows_for(block, piece), is_root, std::move(sources),
      // The root deposits with streaming stores, as a broadcast's root does (node_phases.cpp's
      // kBroadcastChunk: its readers copy out with memcpy, and ordinary stores into lines they
      // read are slow, and the whole cost in a slow spell of the core-to-core link). Interleaved
      // rounds, ÷ Open MPI: 2 ranks fast, BRAID_CMA=off, 0.51-0.78x against 0.57-1.30x, auto
      // 0.56-0.86x against 0.61-0.87x; 4 ranks on 2 cores in a slow spell, auto, 0.30-0.91x
      // against 0.52-1.12x.
      [&](uint32_t k, char *buf) {
        for (int d = 0; d < n; ++d)
          if (d != me) copy_streaming(buf + d * piece, send + at(d) + k * piece, len(k));
      },
      [&](uint32_t k, auto buffer_of) {
        std::memcpy(recv + k * piece, buffer_of(root) + me * piece, len(k));
      });
  // After the windows, which the others wait for.
  if (is_root && send + at(me) != recv) std::memcpy(recv, send + at(me), block);
}

}  // namespace braid::coll
