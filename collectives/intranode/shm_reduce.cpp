// Reduce through the node's shared memory: node_reduce towards the root (node_phases.hpp).
// Vectors up to sizeof(CallSlot::data) travel with the call records and the root combines them
// as soon as it has agreed on the call; the others return at once. Larger ones, where the ranks
// can read each other's buffers, go direct (reduce_direct).
#include <cstring>

#include "intranode/call_check.hpp"
#include "intranode/direct.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/shared_buffers.hpp"
#include "intranode/shm_algorithms.hpp"
#include "intranode/single_copy.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

namespace {

// Whether this rank deposits its vector into the windows with streaming stores (as a
// broadcast's root does, node_phases.cpp's kBroadcastChunk), by what reads it:
// - Vectors that only the root reads and that are smaller than a window (a 2-rank reduce's, and
//   every reduce_whole vector but the root's own, which it reads back): streamed. 2 ranks,
//   interleaved rounds: in a slow spell 16 and 32 KiB 0.60 and 0.90x Open MPI against 2.06 and
//   3.46x (below kReduceSingleCopyMinBytes only the windows carry a reduce); fast, 32 KiB 0.79x
//   against 1.06x, with BRAID_CMA=off 64 and 128 KiB 6.2 and 11.5 us against 9.5 and 15.3 (a
//   partial window costs its writer nearly what a whole one does).
// - A 2-rank reduce's whole windows: ordinary stores. The root's reduction takes them from the
//   writer's cache on a fast day (256 KiB 15 us against 22 streamed, 1 MiB 0.39x Open MPI
//   against 0.64x); in a slow spell the chooser goes single copy. Not timed: the depositing
//   rank returns before the root has read, so its time would show only its own stores.
// - More ranks past reduce_whole (reduce_scatter_gather: every rank deposits the shares the
//   others reduce, and waits for theirs): each rank times both ways (NodeChannel::
//   streams_deposits; its CopyTimer reports). 4 ranks on 2 cores, fast: ordinary 0.21-0.62x
//   Open MPI at 128 KiB-16 MiB, streamed 0.37-1.08x; slow: ordinary 0.93-2.76x, streamed
//   0.47-1.35x.
bool deposits_streamed(NodeChannel &ch, size_t bytes, int root) {
  const bool root_only_reads = ch.size() == 2 || bytes <= kSmallReduceBytes;
  if (root_only_reads) return ch.me() != root && bytes < NodeChannel::kWindow;
  return ch.streams_deposits(CollKind::reduce, bytes);
}

}  // namespace

Task reduce_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "reduce shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int root = ch.map().local_index[args.root];
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    // Off the root: hand the vector over with the record; nothing comes back.
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // The call describes this rank's send buffer, and at the root its receive buffer, so that
  // the ranks reduce in place where they are braid_mem_alloc regions, or the root reads the
  // others' by single copy, answering with a CMA receive reference when it wants that
  // (reduce_direct). Single copy from kReduceSingleCopyMinBytes.
  const size_t bytes = args.bytes();
  const bool cma = bytes >= kReduceSingleCopyMinBytes && ch.cma_offered(bytes);
  DirectRefs refs;
  if (bytes >= kDirectMinBytes) refs.send = shared_ref(args.sendbuf, bytes);
  if (!refs.send.valid() && cma && ch.me() != root) refs.send = cma_ref(args.sendbuf);
  if (ch.me() == root) {
    if (bytes >= kDirectMinBytes) refs.recv = shared_ref(args.recvbuf, bytes);
    // By single copy the root reads and combines every block alone; where the ranks outnumber
    // their cores the windows spread that over the cores. 4 ranks on 2 cores: forced single
    // copy took 2.2-5.6x the windows' time from 256 KiB to 16 MiB in every round, and a
    // chooser that started there kept it for a whole short run (2.3-3x Open MPI at 1, 2 and
    // 16 MiB). So in BRAID_CMA=auto it is not asked there.
    const bool alone_on_shared_cores = ch.oversubscribed() && ch.cma_automatic();
    if (!refs.recv.valid() && cma && !alone_on_shared_cores && ch.want_single(bytes))
      refs.recv = cma_ref(args.recvbuf);
  }
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs);
  CopyTimer timer(ch, bytes);
  co_await reduce_direct(ctx, ch, ticket, args, root, &timer.result);
  // On shared cores the root judges the windows and single copy by the whole call, as a
  // gather's root does (shm_gather.cpp): with single copy the others wait while it reads and
  // combines every block alone, with the windows they combine beside it. 4 ranks on 2 cores,
  // AMD host, four runs of 7-15 alternating rounds: 64, 128 and 512 KiB 0.77-0.96x the time by
  // its own measure, 8-32 KiB and 1 MiB level (256 KiB had another cause: touch_peer_parts).
  timer.result.weighs_call = !timer.result.ran || timer.result.single;
  if (timer.result.ran) co_return;
  // Through the windows: this rank's timings choose how it deposits (the timer reports).
  co_await node_reduce(
      ctx, ch, static_cast<const char *>(args.sendbuf), static_cast<char *>(args.recvbuf),
      ReduceOf{args.count, args.elem_size, args.dtype, args.op, deposits_streamed(ch, bytes, root)},
      root);
}

}  // namespace braid::coll
