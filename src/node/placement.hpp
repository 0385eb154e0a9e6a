// Where a rank's part of the node segment lives. One small function so that hwloc placement
// (hwloc_set_area_membind to the rank's NUMA node) can replace first-touch without touching the
// callers.
#pragma once

#include <cstddef>

namespace braid::detail {

// Called by the rank that owns [p, p + bytes) before anyone else touches it: under the default
// (local) memory policy the first write allocates each page on the NUMA node the rank runs on.
void place_near_this_rank(void *p, size_t bytes);

}  // namespace braid::detail
