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

// Whether this rank deposits its windows with streaming stores, where its timings choose:
// on two ranks the one that is not the root, from a whole window (smaller vectors always
// stream there); on more, every rank past reduce_whole's vectors (which always stream), as each
// deposits the shares the others reduce (node_phases.cpp).
bool deposits_streamed(NodeChannel &ch, size_t bytes, int root) {
  if (ch.size() == 2 ? ch.me() == root || bytes < NodeChannel::kWindow : bytes <= kSmallReduceBytes)
    return false;
  return ch.streams_deposits(bytes);
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
