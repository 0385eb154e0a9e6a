// Where a rank's part of the node segment lives: on the rank's NUMA node, bound there with
// hwloc (hwloc_set_area_membind) when the rank is bound to one node, and placed by first touch
// either way.
#pragma once

#include <cstddef>

namespace braid::detail {

// Called by the rank that owns [p, p + bytes) (page-aligned) before anyone else touches it.
// `numa_node` is the rank's node (-1: not bound to one): the pages are bound to it, then
// touched, so they are allocated now, by this rank, on that node (under the default local
// policy first touch alone would do the same for a bound rank; binding makes it hold under any
// policy and whoever touches a page first).
void place_near_this_rank(void *p, size_t bytes, int numa_node);

// Reads a byte of every page of [p, p + bytes) (page-aligned, already allocated by its owner),
// so that this process's first access to each page is paid here and not in a collective. On the
// 2-core Firecracker VMs a process's first access to a page of shared memory costs 4-6 us even
// when its page table entry is present, the second 0.01 (the hypervisor's cost, by all
// appearances); MADV_POPULATE_READ and MAP_POPULATE fill the entries but leave it in place.
void read_every_page(const void *p, size_t bytes);

}  // namespace braid::detail
