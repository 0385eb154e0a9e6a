// What braid_mem_alloc / braid_mem_free do, behind the C entry points.
#pragma once

#include <cstddef>

namespace braid::detail {

// Resolves `numa_node` (BRAID_NUMA_LOCAL: `rank_node` if known, else the node of the CPU the
// caller runs on), checks it exists (Failure INVALID_ARGUMENT naming the nodes that do) and
// allocates a region bound to it. Throws NO_MEMORY when the memory cannot be mapped.
void *mem_alloc(size_t bytes, int numa_node, int rank_node);
// Frees a braid_mem_alloc region (dropping every communicator's registration of it). Throws
// INVALID_ARGUMENT for a pointer braid_mem_alloc did not return.
void mem_free(void *ptr);

}  // namespace braid::detail
