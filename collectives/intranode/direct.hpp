// Direct (zero-copy) node-local collectives: when every buffer a collective touches lies in a
// braid_mem_alloc region (memfd-backed, mapped by the node's ranks), the ranks read and write
// each other's buffers in place instead of copying through the segment's windows.
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
// rank's buffer is not shareable, nobody goes direct (every rank sees every slot, so all decide
// alike, with no extra step). Otherwise each rank maps what it needs and says whether that
// worked (`direct_ok`, then `posted` of one window); all go direct only if all succeeded, else
// all use the windows, nothing having been touched. The window taken keeps the node's window
// sequence in step; no window buffer is used. At the end each rank publishes `done` and waits
// for everyone's: only then are its send buffer unread and its receive buffer complete.
#pragma once

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"
#include "intranode/shared_buffers.hpp"

namespace braid::coll {

// Below this, the windows' one or two synchronisation steps beat mapping and three steps.
constexpr size_t kDirectMinBytes = size_t{16} << 10;

struct DirectRefs {
  SharedRef send;
  SharedRef recv;
};
static_assert(sizeof(DirectRefs) <= sizeof(CallSlot::data));

// This rank's buffers of the call as peers can map them (both invalid below kDirectMinBytes).
DirectRefs direct_refs(const CollArgs &args);

// Run after agree_on_call(..., &direct_refs(args), sizeof(DirectRefs)) for turn `turn`. *ran says
// whether the collective was done here; if not, nothing was read or written and the caller
// runs the windowed algorithm.
Task allreduce_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, bool *ran);
Task broadcast_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                      bool *ran);
Task allgather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, bool *ran);
// Gather: the root copies every other rank's block straight from its send buffer (only the
// others' send buffers must be shared; each waits until the root has read it). Scatter: every
// rank copies its block straight from the root's send buffer (only that one must be shared; the
// root waits until all have). Their DirectRefs: `send` of what the others read (gather: the
// block; scatter, at the root: all n blocks).
Task gather_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                   bool *ran);
Task scatter_direct(CollContext &ctx, NodeChannel &ch, uint32_t turn, CollArgs args, int root,
                    bool *ran);

}  // namespace braid::coll
