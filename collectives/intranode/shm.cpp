// Every rank on one node: the collective runs entirely through the node's shared memory.
#include <cstring>

#include "intranode/algorithms.hpp"
#include "intranode/call_check.hpp"
#include "intranode/direct.hpp"
#include "intranode/direct_steps.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

Task allreduce_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "allreduce shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    // The vectors travel with the call records: one exchange of one cache line per rank.
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // The buffers are described with the call, so the ranks can work in place (braid_mem_alloc
  // regions) or by single copy (ordinary buffers, where the ranks want that).
  const DirectRefs refs = direct_refs(ch, args);
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs);
  CopyTimer timer(ch, args.bytes());
  co_await allreduce_direct(ctx, ch, ticket, args, &timer.result);
  if (!timer.result.ran)
    co_await node_reduce(ctx, ch, static_cast<const char *>(args.sendbuf),
                         static_cast<char *>(args.recvbuf),
                         ReduceOf{args.count, args.elem_size, args.dtype, args.op}, -1);
}

Task broadcast_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "broadcast shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int root = ch.map().local_index[args.root];
  const size_t bytes = args.bytes();
  if (const TinyPlan tiny = tiny_plan(ch, args); tiny.fits) {
    // The root's vector travels with its call record.
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  // The root's buffer is described with the call: mapped in place where it is a
  // braid_mem_alloc region, else readable by single copy where the ranks want that.
  const bool is_root = ch.me() == root;
  if (is_root && !args.entered) co_await wait_for_slot(ctx, ch, ticket);
  const DirectRefs refs = direct_refs(ch, args);
  co_await agree_on_call(ctx, ch, ticket, args, &refs, sizeof refs, is_root ? kNobody : root,
                         is_root ? kEveryone : kNobody);
  if (const SharedRef r = refs_of(ch, root, ticket).recv; r.valid() && !r.cma())
    co_await agree_with_everyone(ctx, ch, ticket);  // before the mapped path's agreement step
  CopyTimer timer(ch, args.bytes());
  co_await broadcast_direct(ctx, ch, ticket, args, root, &timer.result);
  if (!timer.result.ran)
    co_await node_broadcast(ctx, ch, static_cast<char *>(args.recvbuf), bytes, root);
}

// Every rank publishes its entry (its call record) on its own cache line and waits for all the
// others': agreeing on the call is the barrier, one cache-line exchange per rank.
Task barrier_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "barrier shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
}

}  // namespace braid::coll
