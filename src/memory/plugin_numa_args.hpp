// The ABI v2 part of braid_transport_init_args_t: the rank's node and braid's topology helpers,
// so plugins place their buffers through braid's one hwloc topology instead of loading their own.
#pragma once

#include <braid/transport.h>

namespace braid::detail {

void fill_numa_args(braid_transport_init_args_t *args, int numa_node);

}  // namespace braid::detail
