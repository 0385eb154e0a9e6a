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

}  // namespace braid::detail
