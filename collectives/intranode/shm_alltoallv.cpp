// Alltoallv through the node's shared memory: as alltoall (shm_alltoall.cpp), blocks of any
// size. A rank does not know what the others send each other, so each record carries the
// rank's largest send block (how many windows the call walks: the largest of them all) and,
// where they fit, its sendcounts, against which every rank checks its recvcounts before any
// window is taken, and its blocks when they all fit (then no window is taken at all); else, where
// it fits, a description of its send buffer, which the others may read their blocks from
// directly (alltoallv_direct).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "intranode/call_check.hpp"
#include "intranode/direct.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/shared_buffers.hpp"
#include "intranode/shm_algorithms.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/stream_copy.hpp"

namespace braid::coll {

Task alltoallv_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "alltoallv shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int n = ch.size(), me = ch.me();
  const size_t es = args.elem_size;
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  auto rank_of = [&](int s) { return static_cast<size_t>(ch.world_rank(s)); };
  auto out = [&](int d) { return send + args.displs[rank_of(d)] * es; };
  auto out_bytes = [&](int d) { return args.counts[rank_of(d)] * es; };
  auto in = [&](int s) { return recv + args.recv_displs[rank_of(s)] * es; };
  auto in_bytes = [&](int s) { return args.recv_counts[rank_of(s)] * es; };

  // The record (tiny_calls.hpp: the alltoallv head, then this rank's blocks where they all
  // fit) is checked by tiny_finish, which completes the call when every rank's blocks came with
  // its record; else the blocks walk windows.
  uint64_t staged[sizeof(CallSlot::data) / sizeof(uint64_t)];
  const TinyPlan plan = tiny_plan(ch, args, staged);
  const size_t ref_at = alltoallv_head_bytes(static_cast<size_t>(n));
  size_t largest_in = 0;  // what this rank reads from one peer at most
  for (int s = 0; s < n; ++s)
    if (s != me) largest_in = std::max(largest_in, in_bytes(s));
  size_t record = plan.bytes;
  if (!alltoallv_packed(staged) && alltoallv_room_for_refs(static_cast<size_t>(n))) {
    // Not carrying its blocks, the record describes the send buffer, so that the others read
    // their blocks in place (braid_mem_alloc) or by single copy (alltoallv_direct). Never in
    // place: this rank would overwrite its blocks while the others read them.
    // A rank that reads nothing offers its buffer by the size of what it sends, without
    // asking its chooser: it has no copy to choose for.
    size_t extent = 0, largest_out = 0;
    for (int d = 0; d < n; ++d) {
      if (out_bytes(d) == 0) continue;
      extent = std::max(extent, args.displs[rank_of(d)] * es + out_bytes(d));
      if (d != me) largest_out = std::max(largest_out, out_bytes(d));
    }
    const bool reads = largest_in > 0;
    SharedRef ref;
    if (!args.in_place() && extent > 0) {
      // Mapped where the blocks either way are large enough (offer asks only about reads).
      if (std::max(largest_in, largest_out) >= kDirectMinBytes) ref = shared_ref(send, extent);
      if (!ref.valid()) ref = offer(ch, send, extent, reads ? largest_in : largest_out, reads);
    }
    char *at = reinterpret_cast<char *>(staged) + ref_at;
    std::memcpy(at, &ref, sizeof ref);
    for (int d = 0; d < n; ++d) {
      const uint64_t offset = args.displs[rank_of(d)] * es;
      std::memcpy(at + sizeof ref + static_cast<size_t>(d) * sizeof offset, &offset, sizeof offset);
    }
    record = ref_at + alltoallv_refs_bytes(static_cast<size_t>(n));
  }
  co_await agree_on_call(ctx, ch, ticket, args, plan.data, record);
  if (tiny_finish(ch, ticket, args)) co_return;
  auto words = [&](int s) {
    return reinterpret_cast<const uint64_t *>(ch.call_slot(s, ticket).data);
  };
  uint64_t largest = 0;
  for (int s = 0; s < n; ++s) largest = std::max(largest, words(s)[0]);
  size_t footprint = 0;  // sent and received
  for (int s = 0; s < n; ++s) footprint += in_bytes(s) + out_bytes(s);
  const OwnBlock own{in(me), out(me), in_bytes(me),
                     ch.streams(CollKind::alltoallv, footprint)};  // none in place
  CopyTimer timer(ch, largest_in);
  co_await alltoallv_direct(ctx, ch, ticket, args, ref_at, own, &timer.result);
  if (timer.result.ran) co_return;
  own.copy();
  const size_t piece = pair_piece(n, es);
  auto len = [&](size_t bytes, uint32_t k) {
    const size_t at = size_t{k} * piece;
    return at < bytes ? std::min(piece, bytes - at) : size_t{0};
  };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(largest, piece), true, std::move(sources),
      [&](uint32_t k, char *buf) {  // streamed in a slow spell of the link (DepositGauge)
        size_t bytes = 0;
        for (int d = 0; d < n; ++d)
          if (d != me) bytes += len(out_bytes(d), k);
        ch.deposit_gauge().deposit(bytes, [&](bool streamed) {
          for (int d = 0; d < n; ++d)
            if (d != me && len(out_bytes(d), k) > 0)
              copy_result(buf + d * piece, out(d) + k * piece, len(out_bytes(d), k), streamed);
        });
      },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < n; ++s)
          if (s != me && len(in_bytes(s), k) > 0)
            copy_result(in(s) + k * piece, buffer_of(s) + me * piece, len(in_bytes(s), k),
                        own.streaming);
      });
}

}  // namespace braid::coll
