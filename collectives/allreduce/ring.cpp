// Pipelined, segmented ring allreduce: a ring reduce-scatter then a ring allgather, each chunk
// (1/size of the vector) cut into segments. Bandwidth-optimal for large messages: every rank
// sends and receives 2(n-1)/n of the vector, and reductions of one segment overlap the transfer
// of the next. Each chunk is reduced along the ring exactly once and then only copied, so every
// rank gets identical bits.
//
// Pipelining across steps: the chunk a rank reduces in step s is the one it forwards in step
// s+1, so each segment is forwarded as soon as it is reduced instead of after the whole step.
// Received segments land in a few rotating slots, so scratch memory is bounded by the segment
// size, not the message size.
#include <algorithm>
#include <cstring>
#include <vector>

#include "allreduce/algorithms.hpp"
#include "engine/partition.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

constexpr size_t kSlots = 4;  // receive segments in flight per step
constexpr size_t kDefaultSegment = size_t{1} << 18;

struct Chunks {
  size_t count;
  int n;
  size_t seg;  // elements per segment

  size_t lo(int c) const { return block_start(count, n, c); }
  size_t len(int c) const { return lo(c + 1) - lo(c); }
  size_t segments(int c) const { return (len(c) + seg - 1) / seg; }
  size_t seg_lo(int c, size_t j) const { return lo(c) + j * seg; }
  size_t seg_len(int c, size_t j) const { return std::min(seg, len(c) - j * seg); }
};

}  // namespace

Task allreduce_ring(CollContext &ctx, CollArgs args) {
  const int n = ctx.size();
  const int r = ctx.rank();
  const size_t es = args.elem_size;
  const char *src = static_cast<const char *>(args.sendbuf);
  char *dst = static_cast<char *>(args.recvbuf);
  if (n == 1) {
    if (!args.in_place()) std::memcpy(dst, src, args.bytes());
    co_return;
  }
  const size_t seg_bytes = args.segment_bytes ? args.segment_bytes : kDefaultSegment;
  const Chunks ch{args.count, n, std::max<size_t>(1, seg_bytes / es)};
  size_t max_segments = 0;
  for (int c = 0; c < n; ++c) max_segments = std::max(max_segments, ch.segments(c));
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  // Message numbers: phase 0 is the reduce-scatter, phase 1 the allgather.
  auto msg = [&](int phase, int step, size_t j) {
    return static_cast<uint32_t>((static_cast<size_t>(phase) * n + step) * max_segments + j);
  };
  const int right = mod(r + 1);
  const int left = mod(r - 1);

  auto slots = ctx.scratch(kSlots * ch.seg * es);
  auto slot = [&](size_t j) { return slots.data() + (j % kSlots) * ch.seg * es; };

  // Reduce-scatter. Step 0 sends this rank's own chunk straight from the input.
  std::vector<OpId> rs_sends;
  for (size_t j = 0; j < ch.segments(r); ++j)
    rs_sends.push_back(
        ctx.send(right, src + ch.seg_lo(r, j) * es, ch.seg_len(r, j) * es, msg(0, 0, j)));
  for (int s = 0; s <= n - 2; ++s) {
    const int c = mod(r - s - 1);
    const size_t segs = ch.segments(c);
    std::vector<OpId> recvs(segs);
    for (size_t j = 0; j < std::min(kSlots, segs); ++j)
      recvs[j] = ctx.recv(left, slot(j), ch.seg_len(c, j) * es, msg(0, s, j));
    for (size_t j = 0; j < segs; ++j) {
      co_await ctx.wait(recvs[j]);
      char *out = dst + ch.seg_lo(c, j) * es;
      const size_t len = ch.seg_len(c, j);
      // Partial sum from the left first, then this rank's contribution.
      reduce(out, slot(j), src + ch.seg_lo(c, j) * es, len, args.dtype, args.op);
      if (s < n - 2)
        rs_sends.push_back(ctx.send(right, out, len * es, msg(0, s + 1, j)));
      else  // the chunk is final: it opens the allgather
        ctx.send(right, out, len * es, msg(1, 0, j));
      if (j + kSlots < segs)
        recvs[j + kSlots] =
            ctx.recv(left, slot(j), ch.seg_len(c, j + kSlots) * es, msg(0, s, j + kSlots));
    }
  }
  // The allgather overwrites chunks the reduce-scatter sent from; those sends must be done.
  // (Only those: waiting for the allgather's first sends here could deadlock the ring.)
  for (OpId id : rs_sends) co_await ctx.wait(id);

  // Allgather: every chunk but the one this rank finished arrives from the left, and is
  // forwarded to the right one step later, segment by segment.
  std::vector<std::vector<OpId>> recvs(static_cast<size_t>(n - 1));
  for (int t = 0; t <= n - 2; ++t) {
    const int c = mod(r - t);
    for (size_t j = 0; j < ch.segments(c); ++j)
      recvs[t].push_back(
          ctx.recv(left, dst + ch.seg_lo(c, j) * es, ch.seg_len(c, j) * es, msg(1, t, j)));
  }
  for (int t = 0; t <= n - 2; ++t) {
    const int c = mod(r - t);
    for (size_t j = 0; j < ch.segments(c); ++j) {
      co_await ctx.wait(recvs[t][j]);
      if (t < n - 2)
        ctx.send(right, dst + ch.seg_lo(c, j) * es, ch.seg_len(c, j) * es, msg(1, t + 1, j));
    }
  }
  co_await ctx.wait_all();
}

}  // namespace braid::coll
