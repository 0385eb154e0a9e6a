// Direct (zero-copy) node-local collectives: when every buffer a collective touches lies in a
// braid_mem_alloc region (memfd-backed, mapped by the node's ranks), the ranks read and write
// each other's buffers in place instead of copying through the segment's windows. Where they
// are ordinary buffers, the readers may copy straight out of them through CMA instead (single
// copy, single_copy.hpp), by the same protocol: only how a peer's buffer is reached differs.
//
// Allreduce: rank k reduces the k-th of n shares of the vector from every rank's send buffer,
// in rank order, into its own receive buffer, a cache-sized chunk at a time, and copies each
// chunk into every other rank's receive buffer while it is still in cache. Per rank and byte of
// the vector: one read and one write, against copy in, reduce and copy out through the windows.
// Broadcast: the others copy straight from the root's buffer; the root copies nothing.
// Allgather: every rank copies each other rank's block straight from that rank's send buffer
// into its own receive buffer (one copy per block, against copy in and copy out); only the send
// buffers need to be shared. Gather and scatter likewise, with the root reading or read.
//
// Protocol, after agree_on_call published every rank's DirectRefs in its call slot: if any
// buffer that must be read is not reachable, nobody goes direct (every rank sees every slot, so
// all decide alike, with no extra step). Otherwise each rank maps what it needs (or checks that
// CMA reads it, and asks its chooser whether it wants single copy this time) and says whether it
// is ready (`direct_ok`, then `posted` of one window); all go direct only if all are, else all
// use the windows, nothing having been touched. The window taken keeps the node's window
// sequence in step; no window buffer is used. At the end each rank publishes `done` and waits
// for everyone's: only then are its send buffer unread and its receive buffer complete.
#pragma once

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"
#include "intranode/shared_buffers.hpp"

namespace braid::coll {

// Below this, the windows' one or two synchronisation steps beat mapping and three steps.
constexpr size_t kDirectMinBytes = size_t{16} << 10;

// Allreduce and reduce-scatter may go single-copy from here (whole vector). Below, three
// interleaved runs on a fast day had BRAID_CMA=auto 1.1-1.4x slower than off at 16-128 KiB (2 and 4
// ranks) though the windows were chosen, and from 256 KiB on 4 ranks 0.62-0.70x; in a slow spell
// single copy took 1 MiB from 475-531 us to 115.
constexpr size_t kAllreduceSingleCopyMinBytes = size_t{256} << 10;

// Reduce may go single-copy from here (whole vector): the root reads and reduces, as Open MPI
// does. In a slow spell with rewritten buffers the windows took 38 us at 64 KiB against Open
// MPI's 12.7; on a fast day forced single copy was level with them at 64 KiB (8.9 against 8.8)
// and 1.1-2.2x at 8-32 KiB, where the chooser's first tries cost auto up to 1.8x.
constexpr size_t kReduceSingleCopyMinBytes = size_t{64} << 10;

struct DirectRefs {
  SharedRef send;
  SharedRef recv;
  // A gather's root: whether the others deposit into the windows with streaming stores
  // (shm_gather.cpp), should the windows run.
  bool streamed_deposits = false;
};
static_assert(sizeof(DirectRefs) <= sizeof(CallSlot::data));

// How a peer may reach [p, p + bytes) of this rank: mapped when it lies in a braid_mem_alloc
// region, else through CMA when the channel offers that for `copied` bytes per reader
// (single_copy.hpp) and, if this rank `reads` its peers' buffers in the call too, it wants
// single copy this time (NodeChannel::want_single), else not at all.
SharedRef offer(NodeChannel &ch, const void *p, size_t bytes, size_t copied, bool reads);

// The root's buffer of a broadcast or scatter, of which each reader copies `copied` bytes:
// mapped as offer() does from root_mapped_min(ch, kind) bytes, else offered for single copy
// only when every reader asked for it (NodeChannel::readers_want_single): then the readers copy
// without an agreement step.
SharedRef offer_root_buffer(const NodeChannel &ch, CollKind kind, const void *p, size_t bytes,
                            size_t copied);

// From how many bytes per reader a broadcast's or scatter's root lets the readers copy straight
// out of its mapped buffer. Zero copy holds the root until every reader has copied; through the
// windows it deposits and returns. With a core each that wait is short and zero copy wins from
// kDirectMinBytes; where ranks share cores the root waits for every reader to be scheduled:
// 4 ranks on 2 cores, braid_mem_alloc buffers, 16-256 KiB broadcasts took 22-34 µs zero copy
// against 2-17 through the windows. There zero copy starts at the crossovers measured on that
// machine: 1 MiB for a broadcast, 512 KiB per block for a scatter (below them the windows won).
// Root-local: the readers follow whatever the root's record offers. A root still offers single
// copy (CMA) below them when its readers asked for it, as on ordinary buffers.
size_t root_mapped_min(const NodeChannel &ch, CollKind kind);

// This rank's buffers of the call as peers can reach them (invalid where they cannot: mapped
// from kDirectMinBytes, single copy from kSingleCopyMinBytes where offered).
DirectRefs direct_refs(NodeChannel &ch, const CollArgs &args);

struct DirectResult {
  bool ran = false;     // the collective was done here, in place or single-copy
  bool chose = false;   // this rank copies from an ordinary buffer: it voted by its chooser
  bool single = false;  // it ran through CMA
  int read_root = -1;   // the root this rank read from, in a broadcast or scatter it chose for
  // A call on ordinary buffers whose every rank's part counts where ranks share cores
  // (NodeChannel::call_cost): a broadcast or scatter whose root's buffer was not mapped, a
  // gather or reduce that did not run zero copy. Each rank publishes its part.
  bool weighs_call = false;
};

// This rank's own block of the result (`bytes` from `src` to `dst`). On the direct path it is
// copied after this rank has read the others' blocks and said so (at a gather's root: after
// the others are released), while the others may still be reading this rank's buffer, instead
// of before the call: nobody waits for this copy (a gather's non-root waited through the root's
// 64 KiB memcpy). When the direct path does not run, the caller copies it (copy()).
struct OwnBlock {
  void *dst = nullptr;
  const void *src = nullptr;
  size_t bytes = 0;
  bool streaming = false;  // past the cache (NodeChannel::streams)
  void copy() const;       // nothing when in place (dst == src) or empty
};

// Times a node-local call from its construction (after the call agreement) to the end of the
// collective's frame, whichever path it took, and tells the channel's chooser what it cost when
// this rank chose (a reader of a root's buffer also publishes what it wants next time,
// publish_read_choice). Declared after the Turn, so it reports while the turn is still held. A
// call that throws reports nothing; one whose frame is destroyed while suspended (a peer failed)
// reports the time it ran, once: the next calls' figures soon outweigh it.
class CopyTimer {
 public:
  CopyTimer(NodeChannel &ch, size_t bytes);
  CopyTimer(const CopyTimer &) = delete;
  CopyTimer &operator=(const CopyTimer &) = delete;
  ~CopyTimer();
  DirectResult result;  // filled by the *_direct call

 private:
  NodeChannel &ch_;
  size_t bytes_;
  uint64_t start_ns_;
  int exceptions_;
};

// Run after agree_on_call(..., &refs, sizeof(DirectRefs)) for turn `turn`. res->ran says
// whether the collective was done here; if not, nothing was read or written and the caller
// runs the windowed algorithm.
Task allreduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                      DirectResult *res);
Task broadcast_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                      DirectResult *res);
Task allgather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, OwnBlock own,
                      DirectResult *res);
// Every rank reads its block of every other rank's send buffer (not in place).
Task alltoall_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, OwnBlock own,
                     DirectResult *res);
// Allgatherv: as allgather, blocks of any size; each rank's SharedRef of its send buffer sits at
// `ref_at` of its call slot's data (after the allgatherv head), none past the slot's room.
Task allgatherv_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                       size_t ref_at, OwnBlock own, DirectResult *res);
// Alltoallv: every rank reads its block of every other rank's send buffer, described after
// each record's alltoallv head at `ref_at` (tiny_calls.hpp); not in place.
Task alltoallv_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                      size_t ref_at, OwnBlock own, DirectResult *res);
// Reduce-scatter: every rank reduces its block of every rank's send buffer (DirectRefs::send,
// the whole vector) into its receive buffer; in place works.
Task reduce_scatter_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args,
                           DirectResult *res);
// Reduce: where every send buffer and the root's receive buffer are mapped, every rank reduces
// its share (engine/partition.hpp's blocks) of every rank's send buffer into the root's receive
// buffer; else, where the root offered its receive buffer by CMA (its vote for single copy) and
// the others their send buffers, the root reads and reduces them all.
Task reduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                   DirectResult *res);
// Gather: the root copies every other rank's block straight from its send buffer (only the
// others' send buffers must be reachable; each waits until the root has read it; the root
// copies `own`, its block, once it has released them). Scatter:
// every rank copies its block straight from the root's send buffer (only that one must be
// reachable; the root copies its own block meanwhile, and waits until all have). Their DirectRefs:
// `send` of what the others read (gather: the block; scatter, at the root: all n blocks).
Task gather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                   OwnBlock own, DirectResult *res);
Task scatter_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                    DirectResult *res);

}  // namespace braid::coll
