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
  const void *sendbuf = nullptr;  // input (== recvbuf when in place)
  void *recvbuf = nullptr;        // output; the broadcast buffer
  // allreduce, reduce, broadcast: the vector; allgather, reduce_scatter, alltoall, gather,
  // scatter: one rank's block; allgatherv, alltoallv: this rank's send count (v-variants)
  size_t count = 0;
  braid_dtype_t dtype = BRAID_UINT8;
  braid_op_t op = BRAID_SUM;
  int root = 0;
  size_t elem_size = 1;
  // The v-variants' arrays (elements), one entry per rank; they belong to braid until the
  // call completes. allgatherv: counts/displs = recvcounts/displs. alltoallv: counts/displs =
  // sendcounts/sdispls, recv_counts/recv_displs = recvcounts/rdispls.
  const size_t *counts = nullptr;
  const size_t *displs = nullptr;
  const size_t *recv_counts = nullptr;
  const size_t *recv_displs = nullptr;
  size_t segment_bytes = 0;  // pipeline segment chosen by the selection table (0 = none)
  // Hierarchical algorithms: the flat algorithm the node leaders run among themselves.
  Task (*inner)(CollContext &ctx, CollArgs args) = nullptr;
  size_t inner_segment_bytes = 0;
  // Set by the inline path of small node-local calls (intranode/inline_call.hpp) when it hands
  // the call over: it took node turn `turn` and, with `entered`, published this rank's record.
  // The algorithm's coroutine continues from there instead of taking a turn of its own.
  bool turn_taken = false;
  bool entered = false;
  uint32_t turn = 0;

  size_t bytes() const { return count * elem_size; }
  bool in_place() const { return sendbuf == recvbuf; }
};

// What the ranks must agree on about a call, with the fields its kind does not use zeroed, so
// that call records, call logs and tag signatures compare only what matters.
struct AgreedFields {
  uint32_t kind;
  uint64_t count;
  int32_t dtype;
  int32_t op;
  int32_t root;
};
inline AgreedFields agreed_fields(const CollArgs &a) {
  const KindInfo &info = kind_info(a.kind);
  return {static_cast<uint32_t>(a.kind), info.has_count ? a.count : 0,
          info.has_dtype ? static_cast<int32_t>(a.dtype) : -1,
          info.has_op ? static_cast<int32_t>(a.op) : -1, info.has_root ? a.root : -1};
}

// Whether the call's result is a sum still to be divided by the rank count (BRAID_AVG): every
// kind with an op leaves its result, `count` elements, in recvbuf (null off a reduce's root).
inline bool needs_average(const CollArgs &a) {
  return a.op == BRAID_AVG && kind_info(a.kind).has_op && a.recvbuf != nullptr;
}

// Every algorithm has this signature; CollArgs is taken by value so the coroutine frame owns it.
using AlgorithmFn = Task (*)(CollContext &ctx, CollArgs args);

}  // namespace braid::coll
