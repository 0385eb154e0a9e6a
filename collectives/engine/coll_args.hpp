// The arguments of one collective call, as every algorithm receives them.
#pragma once

#include <braid/braid.h>

#include <cstddef>

#include "engine/coll_context.hpp"
#include "engine/coll_kind.hpp"
#include "engine/task.hpp"

namespace braid::coll {

struct CollArgs {
  CollKind kind = CollKind::allreduce;
  const void *sendbuf = nullptr;  // allreduce input (== recvbuf when in place)
  void *recvbuf = nullptr;        // allreduce output; broadcast buffer
  size_t count = 0;
  braid_dtype_t dtype = BRAID_UINT8;
  braid_op_t op = BRAID_SUM;
  int root = 0;
  size_t elem_size = 1;
  size_t segment_bytes = 0;  // pipeline segment chosen by the selection table (0 = none)
  // Hierarchical algorithms: the flat algorithm the node leaders run among themselves.
  Task (*inner)(CollContext &ctx, CollArgs args) = nullptr;
  size_t inner_segment_bytes = 0;

  size_t bytes() const { return count * elem_size; }
  bool in_place() const { return sendbuf == recvbuf; }
};

// Every algorithm has this signature; CollArgs is taken by value so the coroutine frame owns it.
using AlgorithmFn = Task (*)(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
