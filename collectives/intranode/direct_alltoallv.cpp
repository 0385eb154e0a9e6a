// Alltoallv on the direct path (direct.hpp): as alltoall, blocks of any size and place. Each
// rank's record describes its send buffer after the alltoallv head (tiny_calls.hpp: its
// SharedRef, then where its block for each local rank starts), so every rank reads its block
// of every other rank's send buffer straight into its receive buffer: mapped where they are
// braid_mem_alloc regions, else through CMA where every rank wants single copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "intranode/direct_steps.hpp"
#include "intranode/tiny_calls.hpp"

namespace braid::coll {

Task alltoallv_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                      size_t ref_at, OwnBlock own, DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  if (n < 2 || !alltoallv_room_for_refs(static_cast<size_t>(n))) co_return;
  const size_t es = args.elem_size;
  auto record = [&](int s) { return ch.call_slot(s, turn).data; };
  auto ref_of = [&](int s) {
    SharedRef r;
    std::memcpy(&r, record(s) + ref_at, sizeof r);
    return r;
  };
  // Where this rank's block starts in rank s's send buffer.
  auto offset_in = [&](int s) {
    uint64_t o = 0;
    std::memcpy(&o, record(s) + ref_at + sizeof(SharedRef) + static_cast<size_t>(me) * sizeof o,
                sizeof o);
    return static_cast<size_t>(o);
  };
  auto rank_of = [&](int s) { return static_cast<size_t>(ch.world_rank(s)); };
  auto in_bytes = [&](int s) { return args.recv_counts[rank_of(s)] * es; };
  // Rank s's sendcounts and recvcounts, from its record's head.
  auto words = [&](int s) { return reinterpret_cast<const uint64_t *>(record(s)); };
  auto any_other = [&](int s, size_t counts_at) {
    for (int d = 0; d < n; ++d)
      if (d != s && words(s)[counts_at + rank_of(d)] > 0) return true;
    return false;
  };
  auto sends = [&](int s) { return any_other(s, 2); };
  auto reads = [&](int s) { return any_other(s, 2 + static_cast<size_t>(n)); };
  bool any_cma = false, any_mapped = false, votes_seen = true;
  std::vector<SharedRef> refs(static_cast<size_t>(n));
  for (int s = 0; s < n; ++s) {
    // Every rank sees every record, so all decide alike: the buffer of a rank that sends the
    // others anything must be reachable, else all take the windows (its record carries its
    // blocks, it is in place, too small to offer, or not wanted).
    const SharedRef r = refs[s] = alltoallv_packed(record(s)) ? SharedRef{} : ref_of(s);
    if (sends(s)) {
      if (!r.readable()) co_return;
      any_cma = any_cma || r.cma();
      any_mapped = any_mapped || r.valid();
    } else if (reads(s) && !r.cma()) {
      // A rank that only reads said it wants single copy by offering its buffer through CMA
      // (a mapped reference is offered without asking); any other is asked in an agreement
      // step.
      votes_seen = false;
    }
  }
  std::vector<PeerBuffer> in(static_cast<size_t>(n));
  bool opened = true;
  size_t largest = 0;
  for (int s = 0; s < n; ++s) {
    if (s == me || in_bytes(s) == 0) continue;
    largest = std::max(largest, in_bytes(s));
    opened = open_peer(ch, s, refs[s], offset_in(s) + in_bytes(s), &in[s]) && opened;
  }
  const uint32_t w = ch.take_window();
  bool all = false;
  // A rank that reads nothing, or less than single copy is offered for, has no copy to choose.
  const bool ready =
      ch.cma_offered(largest) ? ready_to_read(ch, opened, any_cma, largest, res) : opened;
  co_await agree_if_mapped(ctx, ch, w, any_mapped || !votes_seen, ready, &all);
  if (all) {
    auto *recv = static_cast<char *>(args.recvbuf);
    for (const int s : reading_order(n, me))
      if (in_bytes(s) > 0)
        copy_from(ch, s, in[s], offset_in(s), recv + args.recv_displs[rank_of(s)] * es, in_bytes(s),
                  own.streaming);
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  own.copy();
  // This rank's send buffer must stay unchanged until every rank has copied from it.
  co_await wait_all_done(ctx, ch, w, "copy this rank's block");
  count(ch, any_cma, res);
}

}  // namespace braid::coll
