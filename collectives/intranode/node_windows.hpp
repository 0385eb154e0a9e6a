// The window loop the node-local data-movement collectives share (gather, scatter, allgather(v),
// alltoall(v), reduce-scatter): per window, the ranks that send deposit their part in their own
// buffer and publish it, the ranks that receive wait for their sources' deposits and take what
// is theirs, and every rank reports the window done. Every local rank walks the same windows in
// the same order (node_channel.hpp), whether it sends, receives, both or neither.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/coll_context.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// memcpy of a block that may be empty: a v-variant's zero count may come with a null buffer
// (an empty std::vector's data()), which memcpy must never see, even for zero bytes.
inline void copy_bytes(void *dst, const void *src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

// `deposit(k, mine)` fills this rank's buffer for the k-th window of the call (only when
// `sends`); `take(k, buffer_of)` runs once every rank in `sources` (this rank excluded: it needs
// no wait) has deposited window k, `buffer_of(s)` being local rank s's buffer of that window.
template <class Deposit, class Take>
Task node_windows(CollContext &ctx, NodeChannel &ch, uint32_t windows, bool sends,
                  std::vector<int> sources, Deposit deposit, Take take) {
  // A rank alone on its node (hierarchical algorithms) has no segment and nobody to move to.
  if (ch.size() == 1) co_return;
  const int me = ch.me();
  for (uint32_t k = 0; k < windows; ++k) {
    const uint32_t w = ch.take_window();
    if (sends) {
      for (int s; (s = ch.buffer_blocker(w)) >= 0;) co_await ctx.wait_flag(ch.buffer_free(s, w));
      deposit(k, ch.buffer(me, w));
      ch.publish(&PeerControl::posted, w + 1);
    }
    for (int s : sources) {
      if (s == me) continue;
      co_await ctx.wait_flag(ch.flag(s, &PeerControl::posted, w + 1, "deposit its data"));
      ch.saw(s, w + 1);
    }
    if (!sources.empty()) take(k, [&ch, w](int s) -> const char * { return ch.buffer(s, w); });
    ch.publish(&PeerControl::done, w + 1);
  }
}

// Every local rank but none: the sources of a rank that reads from all the others.
inline std::vector<int> all_local(const NodeChannel &ch) {
  std::vector<int> v(static_cast<size_t>(ch.size()));
  for (int s = 0; s < ch.size(); ++s) v[static_cast<size_t>(s)] = s;
  return v;
}

// How many windows carry `bytes` in pieces of `piece` bytes (none for nothing: every rank
// computes the same figure from what it agreed with the others).
inline uint32_t windows_for(size_t bytes, size_t piece) {
  return static_cast<uint32_t>((bytes + piece - 1) / piece);
}

// Per (source, destination) pair per window, in the alltoall layout (destination d's piece at
// d * pair_piece): the window split n ways, a whole number of elements, cache-line multiples
// when it can be.
inline size_t pair_piece(int n, size_t elem_size) {
  size_t piece = NodeChannel::kWindow / static_cast<size_t>(n);
  if (piece >= 64) piece -= piece % 64;
  piece -= piece % elem_size;
  return piece;
}

}  // namespace braid::coll
