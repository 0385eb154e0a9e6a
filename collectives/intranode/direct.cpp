#include "intranode/direct.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <vector>

#include "error.hpp"
#include "intranode/direct_steps.hpp"
#include "kernels/stream_copy.hpp"

namespace braid::coll {
namespace {

// A scatter's root keeps its own block: copied while the others read theirs, not before the
// call is published (a 4 MiB block held the readers back by a memcpy's 100 us).
void keep_root_block(const CollArgs &args, size_t offset) {
  const char *own = static_cast<const char *>(args.sendbuf) + offset;
  if (args.kind == CollKind::scatter && own != args.recvbuf)
    std::memcpy(args.recvbuf, own, args.bytes());
}

// A root-read call (broadcast, scatter) whose root offered its buffer for single copy, which it
// does only when every reader asked for it (readers_want_single) and so checked it may: no
// agreement step; the readers copy their part, and the root waits until all have.
Task read_root_single(CollContext &ctx, NodeChannel &ch, CollArgs args, int root, uint64_t addr,
                      size_t offset, DirectResult *res) {
  const uint32_t w = ch.take_window();
  if (ch.me() != root)
    copy_from(ch, root, PeerBuffer{nullptr, ch.pid(root), addr}, offset, args.recvbuf,
              args.bytes());
  ch.publish(&PeerControl::done, w + 1);
  if (ch.me() == root) {
    keep_root_block(args, offset);
    co_await wait_all_done(ctx, ch, w, "copy from the root's buffer");
  }
  count(ch, true, res);
}

// What a reader of a root's ordinary buffer tells its chooser after the call.
void note_reader(const NodeChannel &ch, SharedRef r, int root, size_t copied, DirectResult *res) {
  res->weighs_call = !r.valid();
  if (ch.me() != root && !r.valid() && ch.cma_offered(copied)) {
    res->chose = true;
    res->read_root = root;
  }
}

uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

void OwnBlock::copy() const {
  if (bytes > 0 && dst != src) copy_result(dst, src, bytes, streaming);
}

CopyTimer::CopyTimer(NodeChannel &ch, size_t bytes)
    : ch_(ch), bytes_(bytes), start_ns_(now_ns()), exceptions_(std::uncaught_exceptions()) {}

CopyTimer::~CopyTimer() {
  if (std::uncaught_exceptions() > exceptions_) return;
  const uint64_t ns = now_ns() - start_ns_;
  // A call that tried streaming's other way says little about the copy path: not reported.
  const bool stream_unsettled = ch_.stream_measured(ns);
  if (result.weighs_call) ch_.publish_part_cost(result.single, bytes_, ns);
  if (!result.chose && !ch_.decided()) return;
  if (!stream_unsettled)
    ch_.cma_measured(result.single, bytes_,
                     result.weighs_call ? ch_.call_cost(result.single, bytes_, ns) : ns);
  if (result.read_root >= 0) ch_.publish_read_choice(result.read_root, bytes_);
}

SharedRef offer(NodeChannel &ch, const void *p, size_t bytes, size_t copied, bool reads) {
  if (p == nullptr) return {};
  if (copied >= kDirectMinBytes)
    if (const SharedRef mapped = shared_ref(p, bytes); mapped.valid()) return mapped;
  if (!ch.cma_offered(copied) || (reads && !ch.want_single(copied))) return {};
  return cma_ref(p);
}

DirectRefs direct_refs(NodeChannel &ch, const CollArgs &args) {
  const size_t bytes = args.bytes();
  DirectRefs r;
  // Allgather reads the others' send buffers (one block each; in place, inside recvbuf).
  if (args.kind == CollKind::allgather) {
    r.send = offer(ch, args.sendbuf, bytes, bytes, true);
    return r;
  }
  // Alltoall: each other rank reads its block of this rank's send buffer. Not in place: this
  // rank would overwrite its blocks while the others read them.
  if (args.kind == CollKind::alltoall) {
    if (!args.in_place())
      r.send = offer(ch, args.sendbuf, bytes * static_cast<size_t>(ch.size()), bytes, true);
    return r;
  }
  if (args.kind == CollKind::broadcast) {  // the others read the root's
    if (ch.world_rank(ch.me()) == args.root)
      r.recv = offer_root_buffer(ch, args.kind, args.recvbuf, bytes, bytes);
    return r;
  }
  if (bytes < kDirectMinBytes || args.kind != CollKind::allreduce) return r;
  r.recv = shared_ref(args.recvbuf, bytes);
  r.send = args.in_place() ? r.recv : shared_ref(args.sendbuf, bytes);
  // Ordinary buffers: each rank reads its share of the others' inputs, and then the others'
  // reduced shares, through CMA, where it wants that, from kAllreduceSingleCopyMinBytes.
  if (bytes >= kAllreduceSingleCopyMinBytes && (!r.recv.valid() || !r.send.valid()) &&
      ch.cma_offered(bytes) && ch.want_single(bytes)) {
    if (!r.recv.valid()) r.recv = cma_ref(args.recvbuf);
    if (!r.send.valid()) r.send = args.in_place() ? r.recv : cma_ref(args.sendbuf);
  }
  return r;
}

size_t root_mapped_min(const NodeChannel &ch, CollKind kind) {
  if (!ch.oversubscribed()) return kDirectMinBytes;
  return kind == CollKind::scatter ? size_t{512} << 10 : size_t{1} << 20;
}

SharedRef offer_root_buffer(const NodeChannel &ch, CollKind kind, const void *p, size_t bytes,
                            size_t copied) {
  if (p == nullptr) return {};
  if (copied >= root_mapped_min(ch, kind))
    if (const SharedRef mapped = shared_ref(p, bytes); mapped.valid()) return mapped;
  return ch.readers_want_single(copied) ? cma_ref(p) : SharedRef{};
}

Task broadcast_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                      DirectResult *res) {
  *res = {};
  const int me = ch.me();
  const size_t bytes = args.bytes();
  if (ch.size() < 2) co_return;
  const SharedRef r = refs_of(ch, root, turn).recv;
  note_reader(ch, r, root, bytes, res);
  if (r.cma()) {
    co_await read_root_single(ctx, ch, args, root, r.offset, 0, res);
    co_return;
  }
  if (!r.valid()) co_return;  // only the root's buffer is read by others
  const char *src = me == root ? nullptr : ch.map_peer(root, r, bytes);
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, me == root || src != nullptr, &all);
  if (all && me != root) std::memcpy(args.recvbuf, src, bytes);
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  // The root's buffer must stay unchanged until every rank has copied it.
  if (me == root) co_await wait_all_done(ctx, ch, w, "copy the root's data");
  count(ch, false, res);
}

namespace {

// Every rank reads `bytes` at `offset` of every other rank's buffer `ref_bytes` long (its
// DirectRefs::send) into its receive buffer at the owner's block: allgather (the owner's
// block), alltoall (the reader's block of the owner's send buffer).
Task exchange_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                     size_t ref_bytes, size_t offset, OwnBlock own, DirectResult *res) {
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  bool any_cma = false, any_mapped = false;
  for (int s = 0; s < n; ++s) {
    const SharedRef r = refs_of(ch, s, turn).send;
    if (!r.readable()) co_return;  // every rank decides alike
    any_cma = any_cma || r.cma();
    any_mapped = any_mapped || r.valid();
  }
  std::vector<PeerBuffer> in(static_cast<size_t>(n));
  bool opened = true;
  for (int s = 0; s < n; ++s)
    if (s != me) opened = open_peer(ch, s, refs_of(ch, s, turn).send, ref_bytes, &in[s]) && opened;
  const uint32_t w = ch.take_window();
  bool all = false;
  const bool ready = ready_to_read(ch, opened, any_cma, block, res);
  co_await agree_if_mapped(ctx, ch, w, any_mapped, ready, &all);
  if (all) {
    // The others' blocks are read where their owners keep them; nobody writes a send buffer
    // meanwhile. Each rank starts with the next one (reading_order), as pairwise exchange does.
    auto *recv = static_cast<char *>(args.recvbuf);
    for (const int s : reading_order(n, me))
      copy_from(ch, s, in[s], offset, recv + static_cast<size_t>(ch.world_rank(s)) * block, block,
                own.streaming);
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  own.copy();  // into the receive buffer, which nobody else touches
  // This rank's send buffer must stay unchanged until every rank has copied from it.
  co_await wait_all_done(ctx, ch, w, "copy this rank's block");
  count(ch, any_cma, res);
}

}  // namespace

Task allgather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, OwnBlock own,
                      DirectResult *res) {
  *res = {};
  if (ch.size() < 2) co_return;
  co_await exchange_direct(ctx, ch, turn, args, args.bytes(), 0, own, res);
}

Task alltoall_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, OwnBlock own,
                     DirectResult *res) {
  *res = {};
  const size_t block = args.bytes();
  if (ch.size() < 2 || args.in_place()) co_return;
  co_await exchange_direct(ctx, ch, turn, args, block * static_cast<size_t>(ch.size()),
                           static_cast<size_t>(ch.world_rank(ch.me())) * block, own, res);
}

Task allgatherv_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                       size_t ref_at, OwnBlock own, DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  if (n < 2 || ref_at + sizeof(SharedRef) > sizeof(CallSlot::data)) co_return;
  auto bytes_of = [&](int s) { return args.counts[ch.world_rank(s)] * args.elem_size; };
  auto ref_of = [&](int s) {
    SharedRef r;
    std::memcpy(&r, ch.call_slot(s, turn).data + ref_at, sizeof r);
    return r;
  };
  size_t largest = 0;
  bool any_cma = false, any_mapped = false;
  for (int s = 0; s < n; ++s) largest = std::max(largest, bytes_of(s));
  for (int s = 0; s < n; ++s) {
    // Every rank reads, so every rank says whether it wants single copy, whatever its block
    // (an empty block's reference is never read).
    if (!ref_of(s).readable()) co_return;
    any_cma = any_cma || ref_of(s).cma();
    any_mapped = any_mapped || ref_of(s).valid();
  }
  std::vector<PeerBuffer> in(static_cast<size_t>(n));
  bool opened = true;
  for (int s = 0; s < n; ++s)
    if (s != me && bytes_of(s) > 0)
      opened = open_peer(ch, s, ref_of(s), bytes_of(s), &in[s]) && opened;
  const uint32_t w = ch.take_window();
  bool all = false;
  const bool ready = ready_to_read(ch, opened, any_cma, largest, res);
  co_await agree_if_mapped(ctx, ch, w, any_mapped, ready, &all);
  if (all) {
    auto *recv = static_cast<char *>(args.recvbuf);
    for (const int s : reading_order(n, me))
      if (bytes_of(s) > 0)
        copy_from(ch, s, in[s], 0, recv + args.displs[ch.world_rank(s)] * args.elem_size,
                  bytes_of(s), own.streaming);
  }
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  own.copy();
  co_await wait_all_done(ctx, ch, w, "copy this rank's block");
  count(ch, any_cma, res);
}

Task gather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                   OwnBlock own, DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  if (n < 2) co_return;
  bool any_cma = false, any_mapped = false;
  for (int s = 0; s < n; ++s) {
    if (s == root) continue;
    const SharedRef r = refs_of(ch, s, turn).send;
    if (!r.readable()) co_return;  // every rank alike
    any_cma = any_cma || r.cma();
    any_mapped = any_mapped || r.valid();
  }
  // The root's reference is its answer (shm_gather.cpp): CMA when it wants single copy.
  if (me == root && any_cma) res->chose = true;
  if (any_cma && !any_mapped && !refs_of(ch, root, turn).send.cma()) co_return;
  std::vector<PeerBuffer> in(static_cast<size_t>(n));
  bool ready = true;
  if (me == root) {
    bool opened = true;
    for (int s = 0; s < n; ++s)
      if (s != me) opened = open_peer(ch, s, refs_of(ch, s, turn).send, block, &in[s]) && opened;
    ready = ready_to_read(ch, opened, any_cma, block, res);
  }
  // One window number per rank the root reads (every rank takes them alike): the root
  // publishes `done` = w + k once it has read the k-th, so each rank returns as soon as its own
  // block is read, as with Open MPI's linear gather, instead of all waiting for the last read
  // (4 ranks: on average a quarter of the call sooner).
  const uint32_t w = ch.take_window();
  for (int k = 2; k < n; ++k) ch.take_window();
  const uint32_t last = w + static_cast<uint32_t>(n - 1);
  // The k-th rank the root reads (from 1): the others in order after it.
  auto position = [&](int s) { return static_cast<uint32_t>((s - root + n) % n); };
  bool all = false;
  co_await agree_if_mapped(ctx, ch, w, any_mapped, ready, &all);
  if (all && me == root) {
    auto *recv = static_cast<char *>(args.recvbuf);
    for (int k = 1; k < n; ++k) {
      const int s = (root + k) % n;
      copy_from(ch, s, in[s], 0, recv + static_cast<size_t>(ch.world_rank(s)) * block, block,
                own.streaming);
      ch.publish(&PeerControl::done, w + static_cast<uint32_t>(k));  // k = n - 1: `last`
    }
  } else {
    ch.publish(&PeerControl::done, last);
  }
  if (!all) co_return;
  if (me == root) own.copy();
  if (me != root) {  // this rank's send buffer stays unchanged until the root has read it
    const uint32_t mine = w + position(me);
    // The root reads position(me) blocks first: from a MiB that is long enough to sleep
    // through where ranks share cores (Scheduler::wait), instead of yielding the root's core.
    FlagWait f = ch.flag(root, &PeerControl::done, mine, "copy this rank's block");
    f.long_wait = block * position(me) >= kLongWaitBytes;
    co_await ctx.wait_flag(f);
    ch.saw(root, mine);
    // Left for the root: the reads after this rank's and its own block.
    if (block * (static_cast<uint32_t>(n) - position(me)) >= kLongWaitBytes)
      ch.left_busy(root, turn);
  }
  count(ch, any_cma, res);
}

Task scatter_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                    DirectResult *res) {
  *res = {};
  const int n = ch.size();
  const int me = ch.me();
  const size_t block = args.bytes();
  if (n < 2) co_return;
  const SharedRef r = refs_of(ch, root, turn).send;
  note_reader(ch, r, root, block, res);
  const size_t mine = static_cast<size_t>(ch.world_rank(me)) * block;
  if (r.cma()) {
    co_await read_root_single(ctx, ch, args, root, r.offset, mine, res);
    co_return;
  }
  if (!r.valid()) co_return;  // only the root's buffer is read by others
  const size_t all_bytes = block * static_cast<size_t>(n);
  const char *src = me == root ? nullptr : ch.map_peer(root, r, all_bytes);
  const uint32_t w = ch.take_window();
  bool all = false;
  co_await agree_to_go_direct(ctx, ch, w, me == root || src != nullptr, &all);
  if (all && me != root) std::memcpy(args.recvbuf, src + mine, block);
  ch.publish(&PeerControl::done, w + 1);
  if (!all) co_return;
  // The root's buffer must stay unchanged until every rank has copied its block.
  if (me == root) {
    keep_root_block(args, mine);
    co_await wait_all_done(ctx, ch, w, "copy its block from the root");
  }
  count(ch, false, res);
}

}  // namespace braid::coll
