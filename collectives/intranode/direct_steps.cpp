#include "intranode/direct_steps.hpp"

#include <cerrno>
#include <cstring>

#include "error.hpp"

namespace braid::coll {
namespace {

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
               size_t bytes) {
  if (b.mapped != nullptr) {
    std::memcpy(dst, b.mapped + offset, bytes);
    return;
  }
  // CMA worked for this peer before (cma_usable), so a refusal now means it is gone or its
  // buffer is: the peer's error, not this call's arguments.
  if (!cma_read(b.pid, b.addr + offset, dst, bytes)) cma_failed(ch, s, b, bytes);
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
