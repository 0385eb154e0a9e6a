// Reduce through the node's shared memory: node_reduce towards the root (node_phases.hpp).
// Vectors up to sizeof(CallSlot::data) travel with the call records and the root combines them
// as soon as it has agreed on the call; the others return at once.
#include <cstring>

#include "intranode/call_check.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/shm_algorithms.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Task reduce_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "reduce shm");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int root = ch.map().local_index[args.root];
  const size_t bytes = args.bytes();
  const bool tiny = bytes <= sizeof(CallSlot::data);
  if (tiny && ch.me() != root) {  // hand the vector over with the record; nothing comes back
    co_await publish_call(ctx, ch, ticket, args, args.sendbuf, bytes);
    co_return;
  }
  co_await agree_on_call(ctx, ch, ticket, args, tiny ? args.sendbuf : nullptr, tiny ? bytes : 0);
  if (tiny) {
    if (ch.me() != root) co_return;
    auto data = [&](int s) -> const char * { return ch.call_slot(s, ticket).data; };
    // Local rank order, the lowest rank's data on the left, as every reduction of the node.
    reduce(args.recvbuf, data(0), data(1), args.count, args.dtype, args.op);
    for (int s = 2; s < ch.size(); ++s)
      reduce(args.recvbuf, args.recvbuf, data(s), args.count, args.dtype, args.op);
    co_return;
  }
  co_await node_reduce(ctx, ch, static_cast<const char *>(args.sendbuf),
                       static_cast<char *>(args.recvbuf),
                       ReduceOf{args.count, args.elem_size, args.dtype, args.op}, root);
}

}  // namespace braid::coll
