#include "intranode/direct_steps.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "kernels/reduce_kernels.hpp"
#include "kernels/stream_copy.hpp"

namespace braid::coll {
namespace {

// Through CMA every chunk costs a system call per peer, so chunks are large.
constexpr size_t kCmaChunkBytes = size_t{128} << 10;

// A CMA read refused after the peer was found readable (cma_usable): it is gone (ESRCH), or
// may be being torn down, its memory unmapped before its pid is released (EFAULT), or it
// unmapped its own buffer. Said as every other path says a rank failed, so that a survivor's
// error names the failed rank alike (Faults/KillByHand failed once, in 30-odd runs, with a
// message that did not; its text was lost to a rerun).
[[noreturn]] void cma_failed(const NodeChannel &ch, int s, const PeerBuffer &b, size_t bytes) {
  const int err = errno;
  detail::fail(BRAID_ERR_PEER_FAILED, "rank ", ch.world_rank(s), " failed: its process (pid ",
               b.pid, ", same node) exited, was killed or unmapped its buffer during the call ",
               "(process_vm_readv of ", bytes, " bytes: ", std::strerror(err), ")");
}

}  // namespace

DirectRefs refs_of(const NodeChannel &ch, int local, uint32_t turn) {
  DirectRefs r;
  std::memcpy(&r, ch.call_slot(local, turn).data, sizeof r);
  return r;
}

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

Task agree_if_mapped(CollContext &ctx, NodeChannel &ch, uint32_t w, bool any_mapped, bool ready,
                     bool *all) {
  if (any_mapped) {
    co_await agree_to_go_direct(ctx, ch, w, ready, all);
    co_return;
  }
  *all = true;
}

Task wait_all_done(CollContext &ctx, NodeChannel &ch, uint32_t w, const char *what) {
  for (int s = 0; s < ch.size(); ++s) {
    if (s == ch.me()) continue;
    co_await ctx.wait_flag(ch.flag(s, &PeerControl::done, w + 1, what));
    ch.saw(s, w + 1);
  }
}

bool open_peer(NodeChannel &ch, int s, SharedRef ref, size_t bytes, PeerBuffer *out) {
  if (ref.valid()) {
    out->mapped = ch.map_peer(s, ref, bytes);
    return out->mapped != nullptr;
  }
  if (!ref.cma()) return false;
  out->pid = ch.pid(s);
  out->addr = ref.offset;
  return ch.cma_usable(s);
}

void copy_from(const NodeChannel &ch, int s, const PeerBuffer &b, size_t offset, void *dst,
               size_t bytes, bool streaming) {
  if (b.mapped != nullptr) {
    copy_result(dst, b.mapped + offset, bytes, streaming);
    return;
  }
  // CMA worked for this peer before (cma_usable), so a refusal now means it is gone or its
  // buffer is: the peer's error, not this call's arguments.
  if (!cma_read(b.pid, b.addr + offset, dst, bytes)) cma_failed(ch, s, b, bytes);
}

void reduce_from_peers(CollContext &ctx, const NodeChannel &ch, const CollArgs &args,
                       const std::vector<PeerBuffer> &in, size_t src_at, size_t count, char *dst,
                       int dst_input, AfterReads after_reads) {
  const int n = ch.size();
  const size_t es = args.elem_size;
  // The chunk accumulates in dst, unless that is an input which the first step (ranks 0 and 1)
  // would not have read before the later steps overwrite it: then in scratch.
  const bool own_acc = dst_input < 2;
  // Where dst is the accumulator and no input, the first of ranks 0 and 1 read through CMA is
  // read straight into it and the first step reduces in place, as Open MPI's root receives
  // into its receive buffer: one stream fewer through the cache than staging it (2-rank
  // reduce, 256 KiB-16 MiB: 1.2-1.4x Open MPI's time staged, the kernel's share 1.5x its op's).
  int into_dst = -1;
  if (own_acc && dst_input < 0)
    for (int s = 0; s < 2 && into_dst < 0; ++s)
      if (in[s].mapped == nullptr) into_dst = s;
  bool staged = false;
  for (int s = 0; s < n; ++s) staged = staged || (in[s].mapped == nullptr && s != into_dst);
  // Chunks keep staged data, a scratch accumulator and the inputs read in place in cache until
  // they are reduced. Two ranks whose other input goes straight into dst read the whole range
  // at once: every process_vm_readv costs more than its pages (2-rank reduce, 1 MiB: 128 KiB
  // chunks 119 us, one read 103, Open MPI's one read 92).
  const bool whole = n == 2 && into_dst >= 0 && !staged && own_acc;
  const size_t per_chunk =
      whole ? std::max<size_t>(count, 1) : std::max<size_t>(1, kCmaChunkBytes / es);
  // The peers may go on once this rank has read them all: after the last chunk's reads when
  // every peer's input is read through CMA, after the last reduction when some are mapped
  // (those are read by the reduction itself).
  bool any_peer_mapped = false;
  for (int s = 0; s < n; ++s) any_peer_mapped = any_peer_mapped || (s != ch.me() && in[s].mapped);
  const bool early = after_reads && !any_peer_mapped;
  const size_t chunk = per_chunk * es;
  // A staging chunk per rank where some input is read through CMA, then the accumulator when
  // it cannot be dst.
  const size_t scratch_bytes = ((staged ? static_cast<size_t>(n) : 0) + (own_acc ? 0 : 1)) * chunk;
  ScratchPool::Lease scratch =
      scratch_bytes > 0 ? ctx.scratch(scratch_bytes) : ScratchPool::Lease{};
  std::vector<const char *> src(static_cast<size_t>(n));
  for (size_t i = 0; i < count; i += per_chunk) {
    const size_t cnt = std::min(per_chunk, count - i);
    const size_t off = i * es;
    for (int s = 0; s < n; ++s) {
      if (in[s].mapped != nullptr) {
        src[s] = in[s].mapped + src_at + off;
        continue;
      }
      char *stage = s == into_dst ? dst + off : scratch.data() + static_cast<size_t>(s) * chunk;
      copy_from(ch, s, in[s], src_at + off, stage, cnt * es);
      src[s] = stage;
    }
    if (early && i + per_chunk >= count) after_reads();
    // Exact aliasing of the accumulator and an input is allowed by the kernels.
    char *acc =
        own_acc ? dst + off : scratch.data() + (staged ? static_cast<size_t>(n) : 0) * chunk;
    reduce(acc, src[0], src[1], cnt, args.dtype, args.op);
    for (int s = 2; s < n; ++s) reduce(acc, acc, src[s], cnt, args.dtype, args.op);
    if (!own_acc) std::memcpy(dst + off, acc, cnt * es);
  }
  if (after_reads && !early) after_reads();
}

bool ready_to_read(NodeChannel &ch, bool opened, bool any_cma, size_t bytes, DirectResult *res) {
  if (!any_cma) return opened;
  res->chose = true;
  return ch.want_single(bytes) && opened;
}

void count(NodeChannel &ch, bool single, DirectResult *res) {
  res->ran = true;
  res->single = single;
  if (single)
    ch.count_single_copy_call();
  else
    ch.count_direct_call();
}

}  // namespace braid::coll
