// Hierarchical allreduce and broadcast by segments, so that the stages overlap. One call has
// three stages (node-local reduce to the leader through shared memory, the leaders' algorithm
// over the transport, node-local broadcast); run one after the other, the transport idles while
// the node works and the node idles while the transport works. Cut into segments, a leader runs
// two branches at once (engine/branches.hpp): the transport branch exchanges segment i with the
// other leaders while the node branch reduces segment i + 1 and broadcasts segment i - 1.
//
// Every rank of a node must walk the node channel's windows in the same order, so the node
// branch runs the same sequence of node-local phases on every rank of the node: reduce 0,
// reduce 1, broadcast 0, reduce 2, broadcast 1, ..., broadcast S - 1. Only the leader's node
// branch ever waits for its transport branch (before broadcasting a segment); the other ranks
// wait for the leader in the node-local phases themselves.
//
// Bits stay identical on every rank: each element is reduced in node rank order (node_reduce),
// then by the leaders' algorithm (identical bits on every leader), and then only copied.
#include "intranode/segment_pipeline.hpp"

#include <algorithm>
#include <atomic>

#include "engine/branches.hpp"
#include "intranode/node_phases.hpp"

namespace braid::coll {
namespace {

// Segments of half the vector, at least 1 MiB (four node windows, so each node-local phase
// still pipelines its own windows) and at most 2 MiB. Measured on the 2-core VM with 4 ranks as
// two fake nodes (docs/intranode.md, "Hierarchical pipeline"): from 4 MiB up, 2 MiB segments
// were about 10% faster than 1 MiB ones (fewer leaders' calls and synchronisations), and 1 MiB
// segments still gained at 2 MiB. Below two segments nothing overlaps: the stages run in turn.
constexpr size_t kMinSegmentBytes = size_t{1} << 20;
constexpr size_t kMaxSegmentBytes = size_t{2} << 20;
// The leaders' algorithm of segment i adds i * kStepStride to its message steps, so that the
// messages of consecutive segments have distinct tags (ring uses far fewer steps per segment).
constexpr uint32_t kStepStride = 0x1000;

struct Segments {
  size_t count;  // elements in the vector
  size_t per;    // elements per segment

  size_t n() const { return (count + per - 1) / per; }
  size_t lo(size_t i) const { return i * per; }
  size_t len(size_t i) const { return std::min(per, count - i * per); }
};

// How many segments one branch of this rank has finished, for the other branch to wait on.
using Progress = std::atomic<uint32_t>;

FlagWait reached(const Progress &p, size_t segments, const char *what) {
  return FlagWait{&p, static_cast<uint32_t>(segments), -1, 0, nullptr, what};
}

void finished(Progress &p, size_t segments) {
  p.store(static_cast<uint32_t>(segments), std::memory_order_release);
}

// The leaders' algorithm on elements [lo, lo + len) of `buf`, in place.
Task leaders_segment(CollContext &ctx, const detail::NodeMap &m, CollArgs args, const Segments &s,
                     size_t i) {
  const size_t es = args.elem_size;
  char *buf = static_cast<char *>(args.recvbuf) + s.lo(i) * es;
  args.sendbuf = buf;
  args.recvbuf = buf;
  args.count = s.len(i);
  args.segment_bytes = args.inner_segment_bytes;
  ctx.set_step_base(static_cast<uint32_t>(i) * kStepStride);
  try {
    co_await among_leaders(ctx, m, args);
  } catch (...) {
    ctx.set_step_base(0);
    throw;
  }
  ctx.set_step_base(0);
}

struct AllreducePlan {
  CollArgs args;
  Segments seg;
  bool leader;            // runs the transport branch too
  Progress reduced{0};    // segments reduced on the node (in the leader's recvbuf)
  Progress exchanged{0};  // segments reduced among the leaders
};

Task allreduce_node_stages(CollContext &ctx, NodeChannel &ch, AllreducePlan &p) {
  const CollArgs &a = p.args;
  const size_t es = a.elem_size;
  const auto *send = static_cast<const char *>(a.sendbuf);
  auto *recv = static_cast<char *>(a.recvbuf);
  const size_t n = p.seg.n();
  for (size_t i = 0; i <= n; ++i) {
    if (i < n) {
      const size_t lo = p.seg.lo(i) * es;
      co_await node_reduce(ctx, ch, send + lo, recv + lo, ReduceOf{p.seg.len(i), es, a.dtype, a.op},
                           0);
      finished(p.reduced, i + 1);
    }
    if (i > 0) {
      if (p.leader) co_await ctx.wait_flag(reached(p.exchanged, i, "finish the leaders' exchange"));
      co_await node_broadcast(ctx, ch, recv + p.seg.lo(i - 1) * es, p.seg.len(i - 1) * es, 0);
    }
  }
}

Task allreduce_leader_stages(CollContext &ctx, const detail::NodeMap &m, AllreducePlan &p) {
  for (size_t i = 0; i < p.seg.n(); ++i) {
    co_await ctx.wait_flag(reached(p.reduced, i + 1, "finish the node-local reduction"));
    co_await leaders_segment(ctx, m, p.args, p.seg, i);
    finished(p.exchanged, i + 1);
  }
}

struct BroadcastPlan {
  CollArgs args;  // root: the world rank
  Segments seg;
  int local_root;     // the rank of this node that broadcasts locally
  bool local_first;   // the root's node, root not the leader: node broadcast, then leaders'
  bool wait_leaders;  // this leader broadcasts a segment locally only once it has received it
  Progress ready{0};  // segments the leader holds (local_first) or has received (otherwise)
};

Task broadcast_node_stages(CollContext &ctx, NodeChannel &ch, BroadcastPlan &p) {
  const size_t es = p.args.elem_size;
  auto *buf = static_cast<char *>(p.args.recvbuf);
  for (size_t i = 0; i < p.seg.n(); ++i) {
    if (p.wait_leaders)
      co_await ctx.wait_flag(reached(p.ready, i + 1, "receive the segment from the leaders"));
    co_await node_broadcast(ctx, ch, buf + p.seg.lo(i) * es, p.seg.len(i) * es, p.local_root);
    if (p.local_first) finished(p.ready, i + 1);
  }
}

Task broadcast_leader_stages(CollContext &ctx, const detail::NodeMap &m, BroadcastPlan &p) {
  CollArgs inner = p.args;
  inner.root = m.node_of[p.args.root];
  for (size_t i = 0; i < p.seg.n(); ++i) {
    if (p.local_first)
      co_await ctx.wait_flag(reached(p.ready, i + 1, "finish the node-local broadcast"));
    co_await leaders_segment(ctx, m, inner, p.seg, i);
    if (!p.local_first) finished(p.ready, i + 1);
  }
}

}  // namespace

size_t pipeline_segment_bytes(size_t bytes, size_t elem_size, const detail::NodeMap &m) {
  if (m.nodes < 2 || m.max_local < 2 || bytes < 2 * kMinSegmentBytes) return 0;
  const size_t half = bytes / 2 / NodeChannel::kWindow * NodeChannel::kWindow;
  const size_t segment = std::clamp(half, kMinSegmentBytes, kMaxSegmentBytes);
  return std::max<size_t>(1, segment / elem_size) * elem_size;
}

Task allreduce_pipelined(CollContext &ctx, NodeChannel &ch, CollArgs args, size_t segment) {
  const detail::NodeMap &m = ch.map();
  AllreducePlan p{args, Segments{args.count, segment / args.elem_size}, m.leader()};
  if (!p.leader) {
    co_await allreduce_node_stages(ctx, ch, p);
    co_return;
  }
  // The transport branch first: when both are ready it runs first, so the leaders' messages
  // move on between node windows instead of waiting for the node branch to block (measured:
  // node branch first was up to 10% slower than no pipeline at all).
  co_await both(ctx, allreduce_leader_stages(ctx, m, p), allreduce_node_stages(ctx, ch, p));
}

Task broadcast_pipelined(CollContext &ctx, NodeChannel &ch, CollArgs args, size_t segment) {
  const detail::NodeMap &m = ch.map();
  const int root_node = m.node_of[args.root];
  const int root_local = m.local_index[args.root];
  const bool local_first = m.node == root_node && root_local != 0;
  BroadcastPlan p{args, Segments{args.count, segment / args.elem_size},
                  local_first ? root_local : 0, local_first, m.leader() && m.node != root_node};
  if (!m.leader()) {
    co_await broadcast_node_stages(ctx, ch, p);
    co_return;
  }
  co_await both(ctx, broadcast_leader_stages(ctx, m, p), broadcast_node_stages(ctx, ch, p));
}

}  // namespace braid::coll
