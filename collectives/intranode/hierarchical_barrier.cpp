// Barrier across nodes: the ranks of each node meet in shared memory (agreeing on the call),
// the node leaders run the dissemination barrier among themselves, and each leader releases
// its node: ceil(log2(nodes)) network rounds instead of ceil(log2(ranks)).
#include "barrier/barrier.hpp"
#include "intranode/call_check.hpp"
#include "intranode/hierarchical_algorithms.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/segment_pipeline.hpp"

namespace braid::coll {

Task barrier_hierarchical(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "barrier hierarchical");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  const detail::NodeMap &m = ch.map();
  if (m.leader() && m.nodes > 1)
    co_await among_group(ctx, m.leaders.data(), m.nodes, m.node, barrier_dissemination, args);
  // Nothing to send: the leader's empty broadcast is the release.
  char nothing = 0;
  co_await node_broadcast(ctx, ch, &nothing, 0, 0);
}

}  // namespace braid::coll
