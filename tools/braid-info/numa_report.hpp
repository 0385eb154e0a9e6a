// braid-info's NUMA section: the topology, this process's binding and braidrun's default
// policy, each RDMA device's node (and whether a port is active), and where braid puts buffers.
#pragma once

#include <string>

namespace braid_info {

std::string numa_report(int local_ranks);

}  // namespace braid_info
