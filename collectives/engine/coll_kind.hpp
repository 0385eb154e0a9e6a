// The collective kinds as data. Everything that differs between kinds outside their algorithm
// files (name, override variable, which arguments the ranks must agree on) lives in one
// descriptor, so a new kind is one entry in coll_kind.cpp plus its algorithms.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid::coll {

// Values are published in call records and on the control plane: append, never renumber.
enum class CollKind : uint32_t {
  allreduce,
  broadcast,
  barrier,
  reduce,
  allgather,
  allgatherv,
  reduce_scatter,
  alltoall,
  alltoallv,
  gather,
  scatter,
};
inline constexpr size_t kKindCount = 11;

struct KindInfo {
  CollKind kind;
  const char *name;          // "allreduce", as in messages and braid-info
  const char *override_var;  // BRAID_<KIND>_ALGO: forces one algorithm for every size
  bool has_op;               // the ranks must agree on the reduction op
  bool has_root;             // ... on the root
  bool has_count;            // ... on count (v-variants: counts differ between ranks)
  bool has_dtype;            // ... on the dtype (a barrier moves no data)
  // The algorithm that serves calls with fewer elements than ranks, where block algorithms
  // would move empty blocks around; null when every algorithm copes.
  const char *few_elements_algorithm;
};

const KindInfo &kind_info(CollKind kind);
// The descriptor of a kind received from another rank, or null for a value this build does
// not know.
const KindInfo *find_kind(uint32_t raw);
inline const char *kind_name(CollKind kind) {
  return kind_info(kind).name;
}

}  // namespace braid::coll
