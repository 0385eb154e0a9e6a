// Reduce across nodes: each node reduces in shared memory to its representative (the root on
// the root's node, the leader elsewhere), the representatives run the flat reduce chosen for
// them towards the root, so only one vector per node crosses the network per step. The root
// takes its node leader's place among them, so the result needs no last hop.
#include <vector>

#include "intranode/call_check.hpp"
#include "intranode/hierarchical_algorithms.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/segment_pipeline.hpp"

namespace braid::coll {

Task reduce_hierarchical(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "reduce hierarchical");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  const detail::NodeMap &m = ch.map();
  const int root_node = m.node_of[args.root];
  const int rep_local = m.node == root_node ? m.local_index[args.root] : 0;
  const bool is_rep = m.local_rank == rep_local;
  const bool is_root = ctx.rank() == args.root;
  const size_t bytes = args.bytes();
  auto lease = ctx.scratch(is_rep && !is_root ? bytes : 0);
  char *acc = is_root ? static_cast<char *>(args.recvbuf) : is_rep ? lease.data() : nullptr;
  co_await node_reduce(ctx, ch, static_cast<const char *>(args.sendbuf), acc,
                       ReduceOf{args.count, args.elem_size, args.dtype, args.op}, rep_local);
  if (!is_rep || m.nodes == 1) co_return;
  std::vector<int> reps = m.leaders;
  reps[static_cast<size_t>(root_node)] = args.root;
  CollArgs inner = args;
  inner.sendbuf = acc;
  inner.recvbuf = is_root ? acc : nullptr;  // in place at the root
  inner.root = root_node;
  inner.segment_bytes = args.inner_segment_bytes;
  co_await among_group(ctx, reps.data(), m.nodes, m.node, args.inner, inner);
}

}  // namespace braid::coll
