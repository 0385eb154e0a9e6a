// Allgatherv through the node's shared memory: as allgather (shm_allgather.cpp), blocks of any
// size. Each rank's record carries its sendcount, so before any window is taken every rank
// checks its recvcounts against what the others send, and names the pair that disagrees.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "error.hpp"
#include "intranode/call_check.hpp"
#include "intranode/direct.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/shm_algorithms.hpp"
#include "intranode/tiny_calls.hpp"
#include "kernels/stream_copy.hpp"

namespace braid::coll {

Task allgatherv_shm(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "allgatherv shm");
  const uint32_t ticket = call_turn(ch, args);
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  const int me = ch.me();
  const size_t es = args.elem_size;
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  auto rank_of = [&](int s) { return static_cast<size_t>(ch.world_rank(s)); };
  auto bytes_of = [&](int s) { return args.counts[rank_of(s)] * es; };
  auto place = [&](int s) { return recv + args.displs[rank_of(s)] * es; };
  // Blocks that fit travel with the records (tiny_calls.hpp); larger ones walk windows after the
  // records (the allgatherv head: sendcount and recvcounts) are checked.
  uint64_t staged[sizeof(CallSlot::data) / sizeof(uint64_t)];
  if (const TinyPlan tiny = tiny_plan(ch, args, staged); tiny.fits) {
    co_await tiny_call(ctx, ch, ticket, args, tiny);
    co_return;
  }
  size_t largest = 0;
  for (int s = 0; s < ch.size(); ++s) largest = std::max(largest, bytes_of(s));
  // After the head, the call describes this rank's send buffer, so that the others read it in
  // place where it is a braid_mem_alloc region, or by single copy (allgatherv_direct).
  size_t head = stage_allgatherv_head(ch, args, staged);
  const size_t own_bytes = args.count * es;
  const size_t ref_at = head;
  if (head + sizeof(SharedRef) <= sizeof staged) {
    // An empty block still answers whether this rank wants single copy: any address will do.
    const SharedRef ref = offer(ch, own_bytes > 0 ? send : recv, own_bytes, largest, true);
    std::memcpy(reinterpret_cast<char *>(staged) + head, &ref, sizeof ref);
    head += sizeof ref;
  }
  co_await agree_on_call(ctx, ch, ticket, args, staged, head);
  check_allgatherv_counts(ch, ticket, args);
  size_t footprint = own_bytes;  // sent and received
  for (int s = 0; s < ch.size(); ++s) footprint += bytes_of(s);
  const OwnBlock own{place(me), send, own_bytes,
                     ch.streams(CollKind::allgatherv, footprint)};  // none in place
  CopyTimer timer(ch, largest);
  co_await allgatherv_direct(ctx, ch, ticket, args, ref_at, own, &timer.result);
  if (timer.result.ran) co_return;
  own.copy();
  constexpr size_t piece = NodeChannel::kWindow;
  // Bytes of block `s` that window k carries.
  auto len = [&](int s, uint32_t k) {
    const size_t b = bytes_of(s), at = size_t{k} * piece;
    return at < b ? std::min(piece, b - at) : size_t{0};
  };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(largest, piece), true, std::move(sources),
      [&](uint32_t k, char *buf) {  // streamed in a slow spell of the link (DepositGauge)
        if (len(me, k) == 0) return;
        ch.deposit_gauge().deposit(len(me, k), [&](bool streamed) {
          copy_result(buf, send + k * piece, len(me, k), streamed);
        });
      },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < ch.size(); ++s)
          if (s != me && len(s, k) > 0)
            copy_result(place(s) + k * piece, buffer_of(s), len(s, k), own.streaming);
      });
}

}  // namespace braid::coll
