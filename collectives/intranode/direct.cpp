#include "intranode/direct.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/partition.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

// Reduced a chunk at a time, so copying it to the other ranks reads it from L1. 8 KiB was a
// little faster than 32, 128 and 512 KiB at 256 KiB-64 MiB on the 2-core EPYC VM (2 ranks,
// two interleaved sweeps, machine loaded: differences of 5-15%, near the noise).
constexpr size_t kChunkBytes = size_t{8} << 10;

DirectRefs refs_of(const NodeChannel &ch, int local, uint32_t turn) {
  DirectRefs r;
  std::memcpy(&r, ch.call_slot(local, turn).data, sizeof r);
  return r;
}

// Publishes whether this rank is ready (window w's `posted`) and learns whether all are.
Task agree_to_go_direct(CollContext &ctx, NodeChannel &ch, uint32_t w, bool ready, bool *all) {
  ch.set_direct_ok(ready);
  ch.publish(&PeerControl::posted, w + 1);
  *all = ready;
  for (int s = 0; s < ch.size(); ++s) {
    if (s == ch.me()) continue;
    co_await ctx.wait_flag(ch.flag(s, &PeerControl::posted, w + 1, "map the node's buffers"));
    ch.saw(s, w + 1);
    *all = *all && ch.direct_ok(s);
  }
}

Task wait_all_done(CollContext &ctx, NodeChannel &ch, uint32_t w, const char *what) {
  for (int s = 0; s < ch.size(); ++s) {
    if (s == ch.me()) continue;
    co_await ctx.wait_flag(ch.flag(s, &PeerControl::done, w + 1, what));
    ch.saw(s, w + 1);
  }
}

}  // namespace

DirectRefs direct_refs(const CollArgs &args) {
  const size_t bytes = args.bytes();
  if (bytes < kDirectMinBytes) return {};
  DirectRefs r;
  // Allgather reads the others' send buffers (one block each; in place, inside recvbuf).
  if (args.kind == CollKind::allgather) {
    r.send = shared_ref(args.sendbuf, bytes);
    return r;
  }
  r.recv = shared_ref(args.recvbuf, bytes);
  if (args.kind == CollKind::allreduce && r.recv.valid())
    r.send = args.in_place() ? r.recv : shared_ref(args.sendbuf, bytes);
  return r;
}

Task allreduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, bool *ran) {
  *ran = false;
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
  ch.count_direct_call();
  *ran = true;
}

Task broadcast_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                      bool *ran) {
  *ran = false;
  const int me = ch.me();
  const size_t bytes = args.bytes();
  if (ch.size() < 2 || bytes < kDirectMinBytes) co_return;
  const DirectRefs r = refs_of(ch, root, turn);
  if (!r.recv.valid()) co_return;  // only the root's buffer is read by others
  const char *src = me == root ? nullptr : ch.map_peer(root, r.recv, bytes);
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, me == root || src != nullptr, &all);
  if (all && me != root) std::memcpy(args.recvbuf, src, bytes);
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  // The root's buffer must stay unchanged until every rank has copied it.
  if (me == root) co_await wait_all_done(ctx, ch, w, "copy the root's data");
  ch.count_direct_call();
  *ran = true;
}

Task allgather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, bool *ran) {
  *ran = false;
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  if (n < 2 || block < kDirectMinBytes) co_return;
  for (int s = 0; s < n; ++s)
    if (!refs_of(ch, s, turn).send.valid()) co_return;  // every rank decides alike
  std::vector<const char *> in(static_cast<size_t>(n));
  bool mapped = true;
  for (int s = 0; s < n; ++s) {
    if (s == me) continue;
    in[s] = ch.map_peer(s, refs_of(ch, s, turn).send, block);
    mapped = mapped && in[s] != nullptr;
  }
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, mapped, &all);
  if (all) {
    // This rank's own block is in place already (the caller copied it); the others' blocks
    // are read where their owners keep them. Nobody writes a send buffer meanwhile.
    auto *recv = static_cast<char *>(args.recvbuf);
    for (int s = 0; s < n; ++s)
      if (s != me) std::memcpy(recv + static_cast<size_t>(ch.world_rank(s)) * block, in[s], block);
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  // This rank's send buffer must stay unchanged until every rank has copied from it.
  co_await wait_all_done(ctx, ch, w, "copy this rank's block");
  ch.count_direct_call();
  *ran = true;
}

Task gather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                   bool *ran) {
  *ran = false;
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  if (n < 2 || block < kDirectMinBytes) co_return;
  for (int s = 0; s < n; ++s)
    if (s != root && !refs_of(ch, s, turn).send.valid()) co_return;  // every rank alike
  std::vector<const char *> in(static_cast<size_t>(n));
  bool mapped = true;
  if (me == root)
    for (int s = 0; s < n; ++s) {
      if (s == me) continue;
      in[s] = ch.map_peer(s, refs_of(ch, s, turn).send, block);
      mapped = mapped && in[s] != nullptr;
    }
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, mapped, &all);
  if (all && me == root) {
    auto *recv = static_cast<char *>(args.recvbuf);
    for (int s = 0; s < n; ++s)
      if (s != me) std::memcpy(recv + static_cast<size_t>(ch.world_rank(s)) * block, in[s], block);
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  if (me != root) {  // this rank's send buffer stays unchanged until the root has read it
    co_await ctx.wait_flag(ch.flag(root, &PeerControl::done, w + 1, "copy this rank's block"));
    ch.saw(root, w + 1);
  }
  ch.count_direct_call();
  *ran = true;
}

Task scatter_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                    bool *ran) {
  *ran = false;
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  if (n < 2 || block < kDirectMinBytes) co_return;
  const DirectRefs r = refs_of(ch, root, turn);
  if (!r.send.valid()) co_return;  // only the root's buffer is read by others
  const size_t all_bytes = block * static_cast<size_t>(n);
  const char *src = me == root ? nullptr : ch.map_peer(root, r.send, all_bytes);
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, me == root || src != nullptr, &all);
  if (all && me != root)
    std::memcpy(args.recvbuf, src + static_cast<size_t>(ch.world_rank(me)) * block, block);
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  // The root's buffer must stay unchanged until every rank has copied its block.
  if (me == root) co_await wait_all_done(ctx, ch, w, "copy its block from the root");
  ch.count_direct_call();
  *ran = true;
}

}  // namespace braid::coll
