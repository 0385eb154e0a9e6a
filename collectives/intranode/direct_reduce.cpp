// Reduce and reduce-scatter on the direct path (direct.hpp).
// - Reduce-scatter: each rank reduces its block of every rank's send buffer, in rank order,
//   straight into its receive buffer, reading the others' buffers mapped (braid_mem_alloc) or
//   through CMA: one read of each peer's block, no window.
// - Reduce, every send buffer and the root's receive buffer mapped: rank k reduces the k-th
//   share of the vector from every rank's send buffer straight into the root's receive
//   buffer, as allreduce does into every rank's. Zero copies, the work spread over the ranks.
// - Reduce, ordinary buffers: the root reads the others' send buffers through CMA and reduces
//   the whole vector itself, as Open MPI's and MPICH's do over CMA. Spreading the work (each
//   rank reducing a share into scratch the root then reads) was measured first: the shares are
//   lines just written on another core, which the root then pulls across the core-to-core link,
//   the very cost single copy is there to avoid when that link is slow (2 ranks, 1 MiB: 335 us
//   against the windows' 425 and Open MPI's 92, in a slow spell).
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/partition.hpp"
#include "intranode/direct_steps.hpp"

namespace braid::coll {

Task reduce_scatter_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                           DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  if (n < 2) co_return;
  bool any_cma = false, any_mapped = false;
  for (int s = 0; s < n; ++s) {
    const SharedRef r = refs_of(ch, s, turn).send;
    if (!r.readable()) co_return;  // every rank decides alike
    any_cma = any_cma || r.cma();
    any_mapped = any_mapped || r.valid();
  }
  const size_t all_bytes = block * static_cast<size_t>(n);
  const size_t mine = static_cast<size_t>(ch.world_rank(me)) * block;
  std::vector<PeerBuffer> in(static_cast<size_t>(n));
  in[me].mapped = const_cast<char *>(static_cast<const char *>(args.sendbuf));
  bool opened = true;
  for (int s = 0; s < n; ++s)
    if (s != me) opened = open_peer(ch, s, refs_of(ch, s, turn).send, all_bytes, &in[s]) && opened;
  const uint32_t w = ch.take_window();
  bool all = false;
  const bool ready = ready_to_read(ch, opened, any_cma, all_bytes, res);
  co_await agree_if_mapped(ctx, ch, w, any_mapped, ready, &all);
  // In place, recvbuf is this rank's block of its send buffer, which only this rank reads.
  // Said as soon as this rank has read the others' blocks (reduce_from_peers: before its last
  // reduction where it read them through CMA): they may go on while it reduces.
  bool said = false;
  const auto say_done = [&] {
    ch.publish(&PeerControl::done, w + 1);
    said = true;
  };
  if (all)
    reduce_from_peers(ctx, ch, args, in, mine, args.count, static_cast<char *>(args.recvbuf),
                      args.recvbuf == in[me].mapped + mine ? me : -1, AfterReads::of(say_done));
  if (!said) say_done();
  if (!all) co_return;
  // This rank's send buffer must stay unchanged until every rank has read its block.
  co_await wait_all_done(ctx, ch, w, "read its block of this rank's vector");
  count(ch, any_cma, res);
}

Task reduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                   DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t bytes = args.bytes();
  if (n < 2) co_return;
  // Every rank sees every record, so all decide alike.
  const DirectRefs at_root = refs_of(ch, root, turn);
  bool all_mapped = at_root.recv.valid(), others_readable = true, any_mapped = false;
  bool any_cma = false;
  for (int s = 0; s < n; ++s) {
    const SharedRef r = refs_of(ch, s, turn).send;
    all_mapped = all_mapped && r.valid();
    if (s == root) continue;
    others_readable = others_readable && r.readable();
    any_mapped = any_mapped || r.valid();
    any_cma = any_cma || r.cma();
  }
  // The root's receive reference says whether it wants single copy (shm_reduce.cpp).
  const bool single = !all_mapped && at_root.recv.cma() && others_readable;
  if (!all_mapped && !single) co_return;
  std::vector<PeerBuffer> in(static_cast<size_t>(n));
  PeerBuffer out;  // the root's receive buffer
  in[me].mapped = const_cast<char *>(static_cast<const char *>(args.sendbuf));
  bool opened = true;
  if (all_mapped || me == root)
    for (int s = 0; s < n; ++s)
      if (s != me && (all_mapped || s != root))
        opened = open_peer(ch, s, refs_of(ch, s, turn).send, bytes, &in[s]) && opened;
  if (all_mapped) {
    if (me == root)
      out.mapped = static_cast<char *>(args.recvbuf);
    else
      opened = open_peer(ch, root, at_root.recv, bytes, &out) && opened;
  }
  const bool ready = me == root && single ? ready_to_read(ch, opened, true, bytes, res) : opened;
  const uint32_t w = ch.take_window();
  bool all = false;
  bool said = false;
  const auto say_done = [&] {
    ch.publish(&PeerControl::done, w + 1);
    said = true;
  };
  co_await agree_if_mapped(ctx, ch, w, all_mapped || any_mapped, ready, &all);
  const int in_place =
      at_root.send.valid() && std::memcmp(&at_root.send, &at_root.recv, sizeof(SharedRef)) == 0
          ? root
          : -1;
  if (all && all_mapped) {
    const size_t first = block_start(args.count, n, me);
    const size_t es = args.elem_size;
    reduce_from_peers(ctx, ch, args, in, first * es, block_start(args.count, n, me + 1) - first,
                      out.mapped + first * es, in_place);
  } else if (all && me == root) {
    // The others are released once their vectors are read (reduce_from_peers says when).
    reduce_from_peers(ctx, ch, args, in, 0, args.count, static_cast<char *>(args.recvbuf),
                      args.in_place() ? root : -1, AfterReads::of(say_done));
  }
  if (!said) say_done();
  if (!all) co_return;
  if (all_mapped) {
    // Each rank's send buffer is read, and the root's receive buffer written, by every rank.
    co_await wait_all_done(ctx, ch, w, "reduce its share into the root's buffer");
  } else if (me != root) {  // this rank's send buffer stays unchanged until the root has read it
    FlagWait f = ch.flag(root, &PeerControl::done, w + 1, "reduce this rank's vector");
    // The root reads every vector before it says so: where ranks share cores, sleep through a
    // long wait instead of yielding the root's core, as a gather's ranks do (direct.cpp). 4 ranks
    // on 2 cores, BRAID_CMA=on, 1-16 MiB: 0.52-0.61x the time yielding took (five rounds).
    f.long_wait = bytes * static_cast<size_t>(n - 1) >= kLongWaitBytes;
    co_await ctx.wait_flag(f);
    ch.saw(root, w + 1);
  }
  count(ch, single && any_cma, res);
}

}  // namespace braid::coll
