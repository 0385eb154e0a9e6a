// Allreduce on the direct path (direct.hpp): rank k reduces the k-th share of the vector from
// every rank's send buffer, in rank order (the bits of every node path).
// - Every buffer mapped (braid_mem_alloc): rank k writes its share straight into every rank's
//   receive buffer, a chunk at a time while it is in cache; one step.
// - Ordinary buffers (CMA): a rank writes only its own memory. Rank k reads the k-th share of
//   the others' inputs, reduces it into its own receive buffer, and once every rank has
//   (`reduced`), reads the others' shares out of their receive buffers. Writing into a peer
//   with process_vm_writev was tried first: a peer that failed and returned could have freed
//   and reused that memory by the time a write landed (the fault tests showed the EFAULTs).
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

namespace {

// Every buffer mapped: rank k writes its reduced share into every rank's receive buffer.
void reduce_and_write(CollContext &ctx, NodeChannel &ch, const CollArgs &args,
                      const std::vector<PeerBuffer> &in, const std::vector<PeerBuffer> &out) {
  const int n = ch.size(), me = ch.me();
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
    char *acc = own_acc ? out[me].mapped + off : scratch.data();
    reduce(acc, in[0].mapped + off, in[1].mapped + off, cnt, args.dtype, args.op);
    for (int s = 2; s < n; ++s) reduce(acc, acc, in[s].mapped + off, cnt, args.dtype, args.op);
    for (int s = 0; s < n; ++s)
      if (s != me || !own_acc) std::memcpy(out[s].mapped + off, acc, cnt * es);
  }
}

// Then every other rank's reduced share, out of its receive buffer.
void read_other_shares(NodeChannel &ch, const CollArgs &args, const std::vector<PeerBuffer> &out) {
  const int n = ch.size();
  const size_t es = args.elem_size;
  auto *recv = static_cast<char *>(args.recvbuf);
  for (int s = 0; s < n; ++s) {
    if (s == ch.me()) continue;
    const size_t first = block_start(args.count, n, s);
    const size_t cnt = block_start(args.count, n, s + 1) - first;
    if (cnt > 0) copy_from(ch, s, out[s], first * es, recv + first * es, cnt * es);
  }
}

}  // namespace

Task allreduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                      DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t bytes = args.bytes();
  if (n < 2 || bytes < kDirectMinBytes) co_return;
  bool any_cma = false, any_mapped = false;
  for (int s = 0; s < n; ++s) {
    const DirectRefs r = refs_of(ch, s, turn);
    if (!r.send.readable() || !r.recv.readable()) co_return;  // every rank decides alike
    any_cma = any_cma || r.send.cma() || r.recv.cma();
    any_mapped = any_mapped || r.send.valid() || r.recv.valid();
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
  const bool ready = ready_to_read(ch, opened, any_cma, bytes, res);
  co_await agree_if_mapped(ctx, ch, w, any_mapped, ready, &all);
  if (all && !any_cma) reduce_and_write(ctx, ch, args, in, out);
  if (all && any_cma) {
    // Rank k reduces its share into its own receive buffer, reading the others' inputs.
    const size_t first = block_start(args.count, n, me);
    reduce_from_peers(
        ctx, ch, args, in, first * args.elem_size, block_start(args.count, n, me + 1) - first,
        static_cast<char *>(args.recvbuf) + first * args.elem_size, args.in_place() ? me : -1);
    // Nobody reads a share before its owner has reduced it, and nobody's input changes
    // (in place: is overwritten by the second step) before everyone has read it.
    ch.publish(&PeerControl::reduced, w + 1);
    for (int s = 0; s < n; ++s) {
      if (s == me) continue;
      co_await ctx.wait_flag(ch.flag(s, &PeerControl::reduced, w + 1, "reduce its share"));
      ch.saw(s, w + 1);
    }
    read_other_shares(ch, args, out);
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  co_await wait_all_done(ctx, ch, w,
                         any_cma ? "read this rank's share" : "write its share of the result");
  count(ch, any_cma, res);
}

}  // namespace braid::coll
