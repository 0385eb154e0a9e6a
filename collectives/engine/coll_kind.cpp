// The kind descriptors, in a file of their own so tools that evaluate the selection table
// (braid-bench) can compile them without the engine.
#include "engine/coll_kind.hpp"

#include <array>

namespace braid::coll {
namespace {

// name, override variable, has_op, has_root, has_count, has_dtype, few-elements algorithm.
// For allgather, reduce_scatter, alltoall, gather and scatter `count` is the per-rank block.
constexpr std::array<KindInfo, kKindCount> kKinds = {{
    {CollKind::allreduce, "allreduce", "BRAID_ALLREDUCE_ALGO", true, false, true, true,
     "recursive_doubling"},
    {CollKind::broadcast, "broadcast", "BRAID_BROADCAST_ALGO", false, true, true, true, nullptr},
    {CollKind::barrier, "barrier", "BRAID_BARRIER_ALGO", false, false, false, false, nullptr},
    {CollKind::reduce, "reduce", "BRAID_REDUCE_ALGO", true, true, true, true, "binomial"},
    {CollKind::allgather, "allgather", "BRAID_ALLGATHER_ALGO", false, false, true, true, nullptr},
    {CollKind::allgatherv, "allgatherv", "BRAID_ALLGATHERV_ALGO", false, false, false, true,
     nullptr},
    {CollKind::reduce_scatter, "reduce_scatter", "BRAID_REDUCE_SCATTER_ALGO", true, false, true,
     true, nullptr},
    {CollKind::alltoall, "alltoall", "BRAID_ALLTOALL_ALGO", false, false, true, true, nullptr},
    {CollKind::alltoallv, "alltoallv", "BRAID_ALLTOALLV_ALGO", false, false, false, true, nullptr},
    {CollKind::gather, "gather", "BRAID_GATHER_ALGO", false, true, true, true, nullptr},
    {CollKind::scatter, "scatter", "BRAID_SCATTER_ALGO", false, true, true, true, nullptr},
}};

constexpr bool in_order() {
  for (size_t i = 0; i < kKinds.size(); ++i)
    if (static_cast<size_t>(kKinds[i].kind) != i) return false;
  return true;
}
static_assert(in_order(), "kKinds is indexed by CollKind");

}  // namespace

const KindInfo &kind_info(CollKind kind) {
  return kKinds[static_cast<size_t>(kind)];
}

const KindInfo *find_kind(uint32_t raw) {
  return raw < kKinds.size() ? &kKinds[raw] : nullptr;
}

}  // namespace braid::coll
