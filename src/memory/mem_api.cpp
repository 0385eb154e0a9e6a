#include "memory/mem_api.hpp"

#include <braid/braid.h>

#include "error.hpp"
#include "log.hpp"
#include "memory/node_memory.hpp"
#include "memory/region_registry.hpp"
#include "memory/topology.hpp"

namespace braid::detail {

void *mem_alloc(size_t bytes, int numa_node, int rank_node) {
  if (bytes == 0) fail(BRAID_ERR_INVALID_ARGUMENT, "braid_mem_alloc: bytes is 0");
  const Topology &topo = Topology::get();
  int node = numa_node;
  if (numa_node == BRAID_NUMA_LOCAL) {
    node = rank_node >= 0 ? rank_node : current_cpu_node();
    if (rank_node < 0)
      log(LogLevel::info, "braid_mem_alloc: rank not bound to one NUMA node; using node ", node,
          ", where it runs now");
  } else if (!topo.has_node(numa_node)) {
    fail(BRAID_ERR_INVALID_ARGUMENT, "braid_mem_alloc: NUMA node ", numa_node,
         " does not exist; the nodes are: ", topo.node_list(), " (or BRAID_NUMA_LOCAL)");
  }
  auto region = RegionRegistry::instance().allocate(bytes, node, true);
  if (!region)
    fail(BRAID_ERR_NO_MEMORY, "braid_mem_alloc: cannot map ", bytes, " bytes on NUMA node ", node);
  log(LogLevel::trace, "braid_mem_alloc: ", bytes, " bytes at ", static_cast<void *>(region->base),
      " on NUMA node ", node);
  return region->base;
}

void mem_free(void *ptr) {
  if (ptr == nullptr) return;
  if (!RegionRegistry::instance().release(ptr, true))
    fail(BRAID_ERR_INVALID_ARGUMENT, "braid_mem_free: ", ptr,
         " was not returned by braid_mem_alloc (or was already freed)");
}

}  // namespace braid::detail
