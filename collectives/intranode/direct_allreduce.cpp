// Allreduce on the direct path (direct.hpp): rank k reduces the k-th share of the vector from
// every rank's send buffer and writes it into every rank's receive buffer.
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/partition.hpp"
#include "intranode/direct_steps.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

// Reduced a chunk at a time, so copying it to the other ranks reads it from L1. 8 KiB was a
// little faster than 32, 128 and 512 KiB at 256 KiB-64 MiB on the 2-core EPYC VM (2 ranks,
// two interleaved sweeps, machine loaded: differences of 5-15%, near the noise).
constexpr size_t kChunkBytes = size_t{8} << 10;

}  // namespace

Task allreduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                      DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t bytes = args.bytes();
  if (n < 2 || bytes < kDirectMinBytes) co_return;
  for (int s = 0; s < n; ++s) {
    const DirectRefs r = refs_of(ch, s, turn);
    if (!r.send.valid() || !r.recv.valid()) co_return;  // every rank decides alike
  }
  std::vector<const char *> in(static_cast<size_t>(n));
  std::vector<char *> out(static_cast<size_t>(n));
  bool mapped = true;
  for (int s = 0; s < n; ++s) {
    if (s == me) {
      in[s] = static_cast<const char *>(args.sendbuf);
      out[s] = static_cast<char *>(args.recvbuf);
      continue;
    }
    const DirectRefs r = refs_of(ch, s, turn);
    in[s] = ch.map_peer(s, r.send, bytes);
    out[s] = ch.map_peer(s, r.recv, bytes);
    mapped = mapped && in[s] != nullptr && out[s] != nullptr;
  }
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, mapped, &all);
  if (all) {
    const size_t es = args.elem_size;
    const size_t first = block_start(args.count, n, me);
    const size_t last = block_start(args.count, n, me + 1);
    const size_t per_chunk = std::max<size_t>(1, kChunkBytes / es);
    // The chunk accumulates in this rank's receive buffer, unless that is also its input and
    // the first step (ranks 0 and 1) would overwrite it before it is read: then in scratch.
    const bool own_acc = !args.in_place() || me < 2;
    ScratchPool::Lease scratch = own_acc ? ScratchPool::Lease{} : ctx.scratch(per_chunk * es);
    for (size_t i = first; i < last; i += per_chunk) {
      const size_t cnt = std::min(per_chunk, last - i);
      const size_t off = i * es;
      // Rank order, the lowest rank on the left: the same bits as every other path. Exact
      // aliasing of the accumulator and an input is allowed. Another rank's in-place buffer is
      // written only after the chunk was read from it.
      char *acc = own_acc ? out[me] + off : scratch.data();
      reduce(acc, in[0] + off, in[1] + off, cnt, args.dtype, args.op);
      for (int s = 2; s < n; ++s) reduce(acc, acc, in[s] + off, cnt, args.dtype, args.op);
      for (int s = 0; s < n; ++s)
        if (s != me || !own_acc) std::memcpy(out[s] + off, acc, cnt * es);
    }
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  co_await wait_all_done(ctx, ch, w, "write its share of the result");
  count(ch, false, res);
}

}  // namespace braid::coll
