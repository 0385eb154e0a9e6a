// Ranks on several nodes, some sharing one: a node-local stage through shared memory, the
// flat algorithm among one leader per node (the lowest rank) over the transport, and a
// node-local broadcast of the result. Only one message per node crosses the network per step.
// Bits are identical everywhere: each node reduces in rank order, the leaders' algorithm gives
// all leaders identical bits, and the last stage only copies. Large vectors go by segments
// whose stages overlap (segment_pipeline.cpp); below that the stages run one after the other.
#include <cstring>

#include "intranode/algorithms.hpp"
#include "intranode/call_check.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/segment_pipeline.hpp"

namespace braid::coll {

Task among_group(CollContext &ctx, const int *members, int size, int my_index, AlgorithmFn fn,
                 CollArgs args) {
  ctx.use_group(members, size, my_index);
  try {
    co_await fn(ctx, args);
  } catch (...) {
    ctx.use_world();
    throw;
  }
  ctx.use_world();
}

Task among_leaders(CollContext &ctx, const detail::NodeMap &m, CollArgs inner) {
  co_await among_group(ctx, m.leaders.data(), m.nodes, m.node, inner.inner, inner);
}

Task allreduce_hierarchical(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "allreduce hierarchical");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  const detail::NodeMap &m = ch.map();
  if (const size_t segment = pipeline_segment_bytes(args.bytes(), args.elem_size, m)) {
    co_await allreduce_pipelined(ctx, ch, args, segment);
    co_return;
  }
  auto *recv = static_cast<char *>(args.recvbuf);
  co_await node_reduce(ctx, ch, static_cast<const char *>(args.sendbuf), recv,
                       ReduceOf{args.count, args.elem_size, args.dtype, args.op}, 0);
  if (m.leader() && m.nodes > 1) {
    CollArgs inner = args;
    inner.sendbuf = recv;
    inner.segment_bytes = args.inner_segment_bytes;
    co_await among_leaders(ctx, m, inner);
  }
  co_await node_broadcast(ctx, ch, recv, args.bytes(), 0);
}

Task broadcast_hierarchical(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "broadcast hierarchical");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  const detail::NodeMap &m = ch.map();
  if (const size_t segment = pipeline_segment_bytes(args.bytes(), args.elem_size, m)) {
    co_await broadcast_pipelined(ctx, ch, args, segment);
    co_return;
  }
  auto *buf = static_cast<char *>(args.recvbuf);
  const int root_node = m.node_of[args.root];
  const int root_local = m.local_index[args.root];
  // The root hands the data to its node (and so to its leader) unless it is the leader.
  const bool root_node_first = m.node == root_node && root_local != 0;
  if (root_node_first) co_await node_broadcast(ctx, ch, buf, args.bytes(), root_local);
  if (m.leader() && m.nodes > 1) {
    CollArgs inner = args;
    inner.root = root_node;
    inner.segment_bytes = args.inner_segment_bytes;
    co_await among_leaders(ctx, m, inner);
  }
  if (!root_node_first) co_await node_broadcast(ctx, ch, buf, args.bytes(), 0);
}

}  // namespace braid::coll
