// Reduce through the node's shared memory: node_reduce towards the root (node_phases.hpp).
// Vectors up to sizeof(CallSlot::data) travel with the call records and the root combines them
// as soon as it has agreed on the call; the others return at once.
#include <cstring>

#include "intranode/call_check.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/shm_algorithms.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Task reduce_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "reduce shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int root = ch.map().local_index[args.root];
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    // Off the root: hand the vector over with the record; nothing comes back.
    co_await agree_on_call(ctx, ch, ticket, args, tiny.data, tiny.bytes, tiny.wait_for,
                           tiny.check_later);
    tiny_finish(ch, ticket, args);
    co_return;
  }
  co_await agree_on_call(ctx, ch, ticket, args);
  co_await node_reduce(ctx, ch, static_cast<const char *>(args.sendbuf),
                       static_cast<char *>(args.recvbuf),
                       ReduceOf{args.count, args.elem_size, args.dtype, args.op}, root);
}

}  // namespace braid::coll
