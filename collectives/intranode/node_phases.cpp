#include "intranode/node_phases.hpp"

#include <algorithm>
#include <cstring>

#include "engine/partition.hpp"
#include "error.hpp"
#include "kernels/reduce_kernels.hpp"
#include "kernels/stream_copy.hpp"

namespace braid::coll {
namespace {

// A broadcast's root fills whole windows, with streaming stores. Writing lines that another
// core has read from a window is slow and erratic on the 2-core EPYC VM, and in a slow spell of
// its core-to-core link (cache-line round trip 300+ ns instead of 70-100) it is the whole cost:
// a two-thread copy through four 256 KiB buffers, 1 MiB a call, ran 8.6 GB/s (at times 2.5) in
// 64 or 128 KiB pieces and 14 GB/s in 256 KiB ones on a fast day, 2.2-3.1 GB/s in a slow
// spell, and 15-18 GB/s either way with streaming stores, which invalidate the readers' lines
// without waiting for them and leave the data in memory, where the readers get it at memory
// speed whatever the link. Half windows (a 256 KiB broadcast pipelining two) were the rule
// before; whole ones took 2 ranks, BRAID_CMA=off, 37 us at 512 KiB against 48 and 61 at 1 MiB
// against 97. Streamed against ordinary stores, 2 ranks, BRAID_CMA=off: fast, 16 KiB-512 KiB
// 0.58-0.66x Open MPI against 0.68-1.00x, level from 1 MiB; in a slow spell 0.24-0.82x against
// 2.3-6.1x (single copy, Open MPI's way, is 1.0x there). 4 ranks on 2 cores, auto: slow
// 0.33-0.73x against 0.79-3.35x; fast level (0.2-0.8x both, streamed 5-7% behind at 8-16 MiB).
// Scatter's root streams too (shm_scatter.cpp); a reduce's depositors stream as reduce_shm
// decides (ReduceOf::streamed: their root reads with the reduction kernel, which takes whole
// windows faster from the writer's cache on a fast day: 2-rank 1 MiB 0.39x Open MPI against
// 0.64x streamed); a gather's as its root decides (shm_gather.cpp); allgather(v) and alltoall(v)
// only in a slow spell of the link, which their own deposits show (DepositGauge; on a fast day
// 2-rank allgather 0.87x Open MPI against 1.2x streamed): docs/intranode.md, "Deposits into the
// windows".
constexpr size_t kBroadcastChunk = NodeChannel::kWindow;

// Every rank reduces (or only `to`): all vectors go through one window.
Task reduce_whole(CollContext &ctx, NodeChannel &ch, const char *send, char *recv, ReduceOf r,
                  int to) {
  const int n = ch.size();
  const int me = ch.me();
  const size_t bytes = r.count * r.elem_size;
  const uint32_t w = ch.take_window();
  for (int s; (s = ch.buffer_blocker(w)) >= 0;) co_await ctx.wait_flag(ch.buffer_free(s, w));
  // A vector that fits next to its counter travels on one cache line.
  const bool tiny = bytes <= sizeof(InlineSlot::data);
  auto data = [&](int s) -> const char * {
    return tiny ? ch.inline_slot(s, w).data : ch.buffer(s, w);
  };
  if (tiny) {
    std::memcpy(ch.inline_slot(me, w).data, send, bytes);
    ch.publish_inline(w);
  } else {
    copy_result(ch.buffer(me, w), send, bytes, r.streamed);
    ch.publish(&PeerControl::posted, w + 1);
  }
  if (to < 0 || to == me) {
    for (int s = 0; s < n; ++s) {
      if (s == me) continue;
      co_await ctx.wait_flag(tiny ? ch.inline_flag(s, w, "deposit its data")
                                  : ch.flag(s, &PeerControl::posted, w + 1, "deposit its data"));
      ch.saw(s, w + 1);
    }
    // Rank order, the lowest rank's data on the left: identical bits on every rank.
    reduce(recv, data(0), data(1), r.count, r.dtype, r.op);
    for (int s = 2; s < n; ++s) reduce(recv, recv, data(s), r.count, r.dtype, r.op);
  }
  ch.publish(&PeerControl::done, w + 1);
}

// Two ranks, a reduce to one of them: the other deposits its vector window by window and the
// destination reduces each window straight into its result. Every byte crosses between the
// cores once (the reduce-scatter below moves half the vector each way and the reduced half
// back: 1.5 times), and the destination makes one pass, as Open MPI's root does (2-rank
// reduces of 256 KiB-4 MiB were 1.4-1.7x its time). Whole windows, as a broadcast's: quarter
// vectors (32-128 KiB windows, so that the next deposit overlapped this reduce) took 2 ranks
// 29 us at 256 KiB and 60 at 1 MiB, whole ones 15 and 35 (Open MPI 23 and 93).
Task reduce_pair_to_one(CollContext &ctx, NodeChannel &ch, const char *send, char *recv, ReduceOf r,
                        int to) {
  const int me = ch.me();
  const int other = 1 - me;
  const size_t es = r.elem_size;
  const size_t per_window = std::max<size_t>(1, NodeChannel::kWindow / es);
  for (size_t first = 0; first < r.count; first += per_window) {
    const size_t len = std::min(per_window, r.count - first);
    const uint32_t w = ch.take_window();
    if (me != to) {
      for (int s; (s = ch.buffer_blocker(w)) >= 0;) co_await ctx.wait_flag(ch.buffer_free(s, w));
      copy_result(ch.buffer(me, w), send + first * es, len * es, r.streamed);
      ch.publish(&PeerControl::done, w + 1);  // it reads nothing
      ch.publish(&PeerControl::posted, w + 1);
      continue;
    }
    co_await ctx.wait_flag(ch.flag(other, &PeerControl::posted, w + 1, "deposit its data"));
    ch.saw(other, w + 1);
    // Rank order, the lower rank's data on the left, as everywhere: identical bits.
    const char *mine = send + first * es;
    const char *theirs = ch.buffer(other, w);
    reduce(recv + first * es, me == 0 ? mine : theirs, me == 0 ? theirs : mine, len, r.dtype, r.op);
    ch.publish(&PeerControl::done, w + 1);
  }
}

Task reduce_scatter_gather(CollContext &ctx, NodeChannel &ch, const char *send, char *recv,
                           ReduceOf r, int to) {
  const int n = ch.size();
  const int me = ch.me();
  const size_t es = r.elem_size;
  const size_t per_window = std::max<size_t>(1, NodeChannel::kWindow / es);
  ScratchPool::Lease share_scratch;  // taken by the first window that needs it
  for (size_t first = 0; first < r.count; first += per_window) {
    const size_t len = std::min(per_window, r.count - first);
    auto lo = [&](int b) { return block_start(len, n, b); };
    const uint32_t w = ch.take_window();
    for (int s; (s = ch.buffer_blocker(w)) >= 0;) co_await ctx.wait_flag(ch.buffer_free(s, w));
    // Deposit the shares the other ranks reduce; this rank's own share is read in place.
    char *mine = ch.buffer(me, w);
    const char *in = send + first * es;
    copy_result(mine, in, lo(me) * es, r.streamed);
    copy_result(mine + lo(me + 1) * es, in + lo(me + 1) * es, (len - lo(me + 1)) * es, r.streamed);
    ch.publish(&PeerControl::posted, w + 1);
    for (int s = 0; s < n; ++s) {
      if (s == me) continue;
      co_await ctx.wait_flag(ch.flag(s, &PeerControl::posted, w + 1, "deposit its data"));
      ch.saw(s, w + 1);
    }
    // Reduce this rank's share: at a reduce's root straight into its receive buffer (a copy
    // fewer; in place that buffer is the root's input, read by every step), else into this
    // rank's window where its share was not deposited, for the others to copy. Where this rank's
    // deposits stream, so does its share: reduced in scratch, then streamed into the window
    // (4 ranks on 2 cores, a slow spell: 256 KiB-2 MiB 0.76-1.00x Open MPI against 1.05-1.48x
    // with ordinary stores; fast, level).
    const size_t off = lo(me) * es;
    const size_t cnt = lo(me + 1) - lo(me);
    auto input = [&](int s) { return s == me ? in + off : ch.buffer(s, w) + off; };
    char *acc = mine + off;
    const bool streams_share = r.streamed && to >= 0 && to != me && cnt > 0;
    if (to == me && send != recv) {
      acc = recv + first * es + off;
    } else if (streams_share) {
      if (share_scratch.data() == nullptr)  // the largest share: a window's, rounded up
        share_scratch = ctx.scratch((per_window + static_cast<size_t>(n) - 1) / n * es);
      acc = share_scratch.data();
    }
    if (cnt > 0) {
      reduce(acc, input(0), input(1), cnt, r.dtype, r.op);
      for (int s = 2; s < n; ++s) reduce(acc, acc, input(s), cnt, r.dtype, r.op);
    }
    if (streams_share) copy_streaming(mine + off, acc, cnt * es);
    ch.publish(&PeerControl::reduced, w + 1);
    if (to < 0 || to == me) {
      char *out = recv + first * es;
      if (acc != out + off) std::memcpy(out + off, acc, cnt * es);
      for (int s = 0; s < n; ++s) {
        if (s == me) continue;
        co_await ctx.wait_flag(ch.flag(s, &PeerControl::reduced, w + 1, "reduce its share"));
        std::memcpy(out + lo(s) * es, ch.buffer(s, w) + lo(s) * es, (lo(s + 1) - lo(s)) * es);
      }
    }
    ch.publish(&PeerControl::done, w + 1);
  }
}

}  // namespace

NodeChannel &node_channel(CollContext &ctx, const char *algorithm) {
  if (ctx.node() == nullptr)
    detail::fail(BRAID_ERR_INVALID_ARGUMENT, algorithm,
                 " needs the node-local shared-memory path, which this communicator does not have"
                 " (BRAID_INTRANODE=off, or no two ranks share a node)");
  return *ctx.node();
}

Task node_reduce(CollContext &ctx, NodeChannel &ch, const char *send, char *recv, ReduceOf r,
                 int to) {
  if (ch.size() == 1) {
    if (send != recv) std::memcpy(recv, send, r.count * r.elem_size);
    co_return;
  }
  if (r.count * r.elem_size <= kSmallReduceBytes)
    co_await reduce_whole(ctx, ch, send, recv, r, to);
  else if (ch.size() == 2 && to >= 0)
    co_await reduce_pair_to_one(ctx, ch, send, recv, r, to);
  else
    co_await reduce_scatter_gather(ctx, ch, send, recv, r, to);
}

Task node_broadcast(CollContext &ctx, NodeChannel &ch, char *buf, size_t bytes, int root) {
  if (ch.size() == 1) co_return;
  const int me = ch.me();
  if (bytes <= sizeof(InlineSlot::data)) {  // one cache line: counter and data together
    const uint32_t w = ch.take_window();
    if (me == root) {
      for (int s; (s = ch.buffer_blocker(w)) >= 0;) co_await ctx.wait_flag(ch.buffer_free(s, w));
      std::memcpy(ch.inline_slot(me, w).data, buf, bytes);
      ch.publish(&PeerControl::done, w + 1);
      ch.publish_inline(w);
    } else {
      co_await ctx.wait_flag(ch.inline_flag(root, w, "write the data"));
      ch.saw(root, w + 1);
      std::memcpy(buf, ch.inline_slot(root, w).data, bytes);
      ch.publish(&PeerControl::done, w + 1);
    }
    co_return;
  }
  for (size_t first = 0; first < bytes; first += kBroadcastChunk) {
    const size_t len = std::min(kBroadcastChunk, bytes - first);
    const uint32_t w = ch.take_window();
    if (me == root) {
      for (int s; (s = ch.buffer_blocker(w)) >= 0;) co_await ctx.wait_flag(ch.buffer_free(s, w));
      copy_streaming(ch.buffer(me, w), buf + first, len);  // kBroadcastChunk says why
      ch.publish(&PeerControl::done, w + 1);  // the root reads nothing
      ch.publish(&PeerControl::posted, w + 1);
    } else {
      co_await ctx.wait_flag(ch.flag(root, &PeerControl::posted, w + 1, "write the data"));
      ch.saw(root, w + 1);
      std::memcpy(buf + first, ch.buffer(root, w), len);
      ch.publish(&PeerControl::done, w + 1);
    }
  }
}

}  // namespace braid::coll
