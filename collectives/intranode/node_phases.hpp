// The node-local building blocks, each run by every rank of one node through its NodeChannel.
// The collectives (shm_*.cpp, hierarchical.cpp) compose them.
#pragma once

#include <braid/braid.h>

#include <cstddef>

#include "engine/coll_args.hpp"
#include "intranode/node_channel.hpp"

namespace braid::coll {

// Up to this many bytes a reduction goes through one window in which every rank deposits its
// whole vector and every reducing rank combines them all; above, the vector is reduce-scattered.
constexpr size_t kSmallReduceBytes = size_t{16} << 10;

struct ReduceOf {
  size_t count;
  size_t elem_size;
  braid_dtype_t dtype;
  braid_op_t op;
  // This rank deposits into the windows with streaming stores (reduce_shm decides; the
  // other callers keep ordinary stores).
  bool streamed = false;
};

// recv = the reduction of every local rank's send, in local rank order, on every local rank
// (to < 0) or only on local rank `to` (the others' recv is left alone). Small vectors: one
// window, every reducing rank combines all of them. Large: per window, a reduce-scatter (each
// rank reduces 1/n of the window, each element once) and a gather of the reduced shares; on two
// ranks with a `to`, the other deposits its vector and `to` reduces each window into recv.
Task node_reduce(CollContext &ctx, NodeChannel &ch, const char *send, char *recv, ReduceOf r,
                 int to);
// buf on every local rank = buf on local rank `root`, window by window (the root writes each
// window once; the others copy it out while the root writes the next).
Task node_broadcast(CollContext &ctx, NodeChannel &ch, char *buf, size_t bytes, int root);

// The node's channel; throws Failure when the communicator has none.
NodeChannel &node_channel(CollContext &ctx, const char *algorithm);

}  // namespace braid::coll
