// Page-aligned memory whose pages are bound to one NUMA node (mbind through hwloc). The pages
// are placed when first touched, on the bound node whichever thread touches them.
#pragma once

#include <cstddef>

namespace braid::detail {

// `node` is an OS index, or -1 for no binding. Returns nullptr when the memory cannot be
// mapped. A node that cannot be bound to (an XML-replayed topology, a container that forbids
// mbind) still yields memory, unbound, and a warning once.
void *alloc_on_node(size_t bytes, int node) noexcept;
void free_on_node(void *ptr, size_t bytes) noexcept;

// The same, backed by an anonymous memory file (memfd) mapped shared, so that other ranks of
// the node can map the same pages (through /proc/<pid>/fd/<fd>) and collectives can read and
// write them in place. *fd is the file, or -1 when memfd_create is not available (then the
// memory is private, as from alloc_on_node). free_shared_on_node unmaps and closes it.
void *alloc_shared_on_node(size_t bytes, int node, int *fd) noexcept;
void free_shared_on_node(void *ptr, size_t bytes, int fd) noexcept;

// Binds the pages of [p, p + bytes) (page-aligned) to `node` (no-op for -1); on a shared mapping
// this sets the shared object's policy. A failure is logged once and leaves the memory unbound.
void bind_area_to_node(void *p, size_t bytes, int node) noexcept;

// The node the calling thread's CPU belongs to right now (-1 if unknown): where an unbound
// rank's BRAID_NUMA_LOCAL memory goes.
int current_cpu_node() noexcept;

}  // namespace braid::detail
