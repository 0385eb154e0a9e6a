// The kind descriptors, in a file of their own so tools that evaluate the selection table
// (braid-bench) can compile them without the engine.
#include "engine/coll_kind.hpp"

#include <array>

namespace braid::coll {
namespace {

constexpr std::array<KindInfo, kKindCount> kKinds = {{
    {CollKind::allreduce, "allreduce", "BRAID_ALLREDUCE_ALGO", true, false, true,
     "recursive_doubling"},
    {CollKind::broadcast, "broadcast", "BRAID_BROADCAST_ALGO", false, true, true, nullptr},
    {CollKind::barrier, "barrier", "BRAID_BARRIER_ALGO", false, false, false, nullptr},
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
