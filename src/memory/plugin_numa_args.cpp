#include "memory/plugin_numa_args.hpp"

#include "error.hpp"
#include "memory/node_memory.hpp"
#include "memory/topology.hpp"

namespace braid::detail {
namespace {

int device_numa_node(const char *os_device) {
  if (os_device == nullptr) return -1;
  try {
    return Topology::get().device_node(os_device);
  } catch (const Failure &) {
    return -1;
  }
}

void *alloc_bound(size_t bytes, int numa_node) {
  return alloc_on_node(bytes, numa_node);
}

void free_bound(void *ptr, size_t bytes) {
  free_on_node(ptr, bytes);
}

}  // namespace

void fill_numa_args(braid_transport_init_args_t *args, int numa_node) {
  args->numa_node = numa_node;
  args->device_numa_node = device_numa_node;
  args->alloc_on_node = alloc_bound;
  args->free_on_node = free_bound;
}

}  // namespace braid::detail
