// Every rank on one node: the collective runs entirely through the node's shared memory.
#include "intranode/algorithms.hpp"
#include "intranode/call_check.hpp"
#include "intranode/node_phases.hpp"

namespace braid::coll {

Task allreduce_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "allreduce shm");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  co_await node_reduce(ctx, ch, static_cast<const char *>(args.sendbuf),
                       static_cast<char *>(args.recvbuf),
                       ReduceOf{args.count, args.elem_size, args.dtype, args.op}, -1);
}

Task broadcast_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "broadcast shm");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  co_await node_broadcast(ctx, ch, static_cast<char *>(args.recvbuf), args.bytes(),
                          ch.map().local_index[args.root]);
}

}  // namespace braid::coll
