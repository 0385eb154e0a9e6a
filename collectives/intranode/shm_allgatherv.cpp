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
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/shm_algorithms.hpp"

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
  size_t largest = 0;
  for (int s = 0; s < ch.size(); ++s) largest = std::max(largest, bytes_of(s));
  // The record carries [sendcount][recvcounts, where they fit][block, when it fits]: every rank
  // checks every rank's recvcounts against every sendcount in the same order, so all of them
  // fail with the same message naming the first pair that differs. Whether the block fits is
  // decided from the recvcounts, the same on every rank that agrees with the others.
  const auto n = static_cast<size_t>(ch.size());
  const bool with_counts = (1 + n) * sizeof(uint64_t) <= sizeof(CallSlot::data);
  const size_t head = (with_counts ? 1 + n : 1) * sizeof(uint64_t);
  const bool tiny = largest <= sizeof(CallSlot::data) - head;
  uint64_t staged[sizeof(CallSlot::data) / sizeof(uint64_t)];
  staged[0] = args.count;
  for (size_t r = 0; with_counts && r < n; ++r) staged[1 + r] = args.counts[r];
  const size_t own_bytes = args.count * es;
  if (tiny && own_bytes <= sizeof(staged) - head)
    copy_bytes(reinterpret_cast<char *>(staged) + head, send, own_bytes);
  co_await agree_on_call(ctx, ch, ticket, args, staged, tiny ? head + own_bytes : head);
  auto words = [&](int s) {
    return reinterpret_cast<const uint64_t *>(ch.call_slot(s, ticket).data);
  };
  for (int s = 0; s < ch.size(); ++s) {  // block s, as rank s sends it
    if (!with_counts) {
      check_v_count(ch.world_rank(me), "recvcounts", ch.world_rank(s), args.counts[rank_of(s)],
                    "sendcount", words(s)[0]);
      continue;
    }
    for (int r = 0; r < ch.size(); ++r)  // ... and as rank r expects it
      check_v_count(ch.world_rank(r), "recvcounts", ch.world_rank(s), words(r)[1 + rank_of(s)],
                    "sendcount", words(s)[0]);
  }
  if (place(me) != send) copy_bytes(place(me), send, own_bytes);  // else in place
  if (tiny) {
    for (int s = 0; s < ch.size(); ++s)
      if (s != me)
        copy_bytes(place(s), reinterpret_cast<const char *>(words(s)) + head, bytes_of(s));
    co_return;
  }
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
      [&](uint32_t k, char *buf) {
        if (len(me, k) > 0) std::memcpy(buf, send + k * piece, len(me, k));
      },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < ch.size(); ++s)
          if (s != me && len(s, k) > 0) std::memcpy(place(s) + k * piece, buffer_of(s), len(s, k));
      });
}

}  // namespace braid::coll
