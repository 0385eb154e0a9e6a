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
// Through CMA every chunk costs a system call per peer each way, so chunks are larger.
constexpr size_t kCmaChunkBytes = size_t{128} << 10;

}  // namespace

Task allreduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                      DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t bytes = args.bytes();
  if (n < 2 || bytes < kDirectMinBytes) co_return;
  bool any_cma = false;
  for (int s = 0; s < n; ++s) {
    const DirectRefs r = refs_of(ch, s, turn);
    if (!r.send.readable() || !r.recv.readable()) co_return;  // every rank decides alike
    any_cma = any_cma || r.send.cma() || r.recv.cma();
  }
  std::vector<PeerBuffer> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  bool opened = true;
  for (int s = 0; s < n; ++s) {
    if (s == me) {
      in[s].mapped = const_cast<char *>(static_cast<const char *>(args.sendbuf));
      out[s].mapped = static_cast<char *>(args.recvbuf);
      continue;
    }
    const DirectRefs r = refs_of(ch, s, turn);
    opened = open_peer(ch, s, r.send, bytes, &in[s]) && opened;
    opened = open_peer(ch, s, r.recv, bytes, &out[s]) && opened;
  }
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, ready_to_read(ch, opened, any_cma, bytes, res), &all);
  if (all) {
    const size_t es = args.elem_size;
    const size_t first = block_start(args.count, n, me);
    const size_t last = block_start(args.count, n, me + 1);
    const size_t per_chunk = std::max<size_t>(1, (any_cma ? kCmaChunkBytes : kChunkBytes) / es);
    const size_t chunk = per_chunk * es;
    // The chunk accumulates in this rank's receive buffer, unless that is also its input and
    // the first step (ranks 0 and 1) would overwrite it before it is read: then in scratch,
    // after one staging chunk per rank for the inputs read through CMA.
    const bool own_acc = !args.in_place() || me < 2;
    const size_t scratch_chunks = (any_cma ? static_cast<size_t>(n) : 0) + (own_acc ? 0 : 1);
    ScratchPool::Lease scratch =
        scratch_chunks > 0 ? ctx.scratch(scratch_chunks * chunk) : ScratchPool::Lease{};
    std::vector<const char *> src(static_cast<size_t>(n));
    for (size_t i = first; i < last; i += per_chunk) {
      const size_t cnt = std::min(per_chunk, last - i);
      const size_t off = i * es;
      for (int s = 0; s < n; ++s) {
        if (in[s].mapped != nullptr) {
          src[s] = in[s].mapped + off;
          continue;
        }
        char *stage = scratch.data() + static_cast<size_t>(s) * chunk;
        copy_from(ch, s, in[s], off, stage, cnt * es);
        src[s] = stage;
      }
      // Rank order, the lowest rank on the left: the same bits as every other path. Exact
      // aliasing of the accumulator and an input is allowed. Another rank's in-place buffer is
      // written only after the chunk was read from it.
      char *acc = own_acc ? out[me].mapped + off : scratch.data() + (scratch_chunks - 1) * chunk;
      reduce(acc, src[0], src[1], cnt, args.dtype, args.op);
      for (int s = 2; s < n; ++s) reduce(acc, acc, src[s], cnt, args.dtype, args.op);
      for (int s = 0; s < n; ++s)
        if (s != me || !own_acc) copy_to(ch, s, out[s], off, acc, cnt * es);
    }
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  co_await wait_all_done(ctx, ch, w, "write its share of the result");
  count(ch, any_cma, res);
}

}  // namespace braid::coll
