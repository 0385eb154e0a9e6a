// Alltoallv through the node's shared memory: as alltoall (shm_alltoall.cpp), blocks of any
// size. A rank does not know what the others send each other, so each record carries the
// rank's largest send block (how many windows the call walks: the largest of them all) and,
// where they fit, its sendcounts, against which every rank checks its recvcounts before any
// window is taken.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "intranode/call_check.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/shm_algorithms.hpp"

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

  // The record carries [largest send block][sendcounts][recvcounts], the counts where they
  // fit: every rank checks the whole matrix in the same order, so all of them fail with the
  // same message naming the first pair that differs.
  uint64_t staged[sizeof(CallSlot::data) / sizeof(uint64_t)];
  const auto un = static_cast<size_t>(n);
  const bool with_counts = 1 + 2 * un <= std::size(staged);
  staged[0] = 0;
  for (int d = 0; d < n; ++d) staged[0] = std::max<uint64_t>(staged[0], out_bytes(d));
  for (size_t r = 0; with_counts && r < un; ++r) {
    staged[1 + r] = args.counts[r];
    staged[1 + un + r] = args.recv_counts[r];
  }
  const size_t record_bytes = sizeof(uint64_t) * (with_counts ? 1 + 2 * un : 1);
  co_await agree_on_call(ctx, ch, ticket, args, staged, record_bytes);
  auto words = [&](int s) {
    return reinterpret_cast<const uint64_t *>(ch.call_slot(s, ticket).data);
  };
  uint64_t largest = 0;
  for (int s = 0; s < n; ++s) largest = std::max(largest, words(s)[0]);
  for (int s = 0; s < n && with_counts; ++s)  // what rank s sends
    for (int r = 0; r < n; ++r) {             // ... to rank r, and what r expects from s
      const size_t rs = rank_of(s), rr = rank_of(r);
      check_v_count(static_cast<int>(rr), "recvcounts", static_cast<int>(rs), words(r)[1 + un + rs],
                    "sendcounts", words(s)[1 + rr], static_cast<int>(rr));
    }
  if (in_bytes(me) > 0) std::memcpy(in(me), out(me), in_bytes(me));
  const size_t piece = pair_piece(n, es);
  auto len = [&](size_t bytes, uint32_t k) {
    const size_t at = size_t{k} * piece;
    return at < bytes ? std::min(piece, bytes - at) : size_t{0};
  };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(largest, piece), true, std::move(sources),
      [&](uint32_t k, char *buf) {
        for (int d = 0; d < n; ++d)
          if (d != me && len(out_bytes(d), k) > 0)
            std::memcpy(buf + d * piece, out(d) + k * piece, len(out_bytes(d), k));
      },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 0; s < n; ++s)
          if (s != me && len(in_bytes(s), k) > 0)
            std::memcpy(in(s) + k * piece, buffer_of(s) + me * piece, len(in_bytes(s), k));
      });
}

}  // namespace braid::coll
