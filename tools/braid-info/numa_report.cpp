#include "numa_report.hpp"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "error.hpp"
#include "memory/topology.hpp"

namespace braid_info {
namespace {

using braid::detail::cat;

// Every RDMA device the kernel has (rxe0 included, which hwloc does not list as it has no PCI
// parent), sorted, with whether any of its ports is ACTIVE.
std::vector<std::pair<std::string, bool>> kernel_rdma_devices() {
  std::vector<std::pair<std::string, bool>> out;
  DIR *d = opendir("/sys/class/infiniband");
  if (d == nullptr) return out;
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool active = false;
    for (int port = 1; port <= 4 && !active; ++port) {
      std::ifstream state(cat("/sys/class/infiniband/", name, "/ports/", port, "/state"));
      std::string line;
      if (std::getline(state, line) && line.find("ACTIVE") != std::string::npos) active = true;
    }
    out.emplace_back(name, active);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string numa_report(int local_ranks) {
  const auto &topo = braid::detail::Topology::get();
  std::string out = "numa:\n";
  out += cat("  topology: ", topo.summary(),
             topo.is_this_system() ? "" : " (replayed from HWLOC_XMLFILE)", "\n");
  const int node = topo.bound_node();
  const int cores = hwloc_get_nbobjs_by_type(topo.handle(), HWLOC_OBJ_CORE);
  out +=
      cat("  this process: NUMA node ", node, node < 0 ? " (CPUs span several nodes)" : "", "\n");
  out += cat("  braidrun binding for ", local_ranks, " local ranks: --bind-to ",
             cores >= local_ranks ? "core" : "none", " by default (", cores,
             " cores); --bind-to numa puts local rank i on node i mod ", topo.nodes().size(), "\n");
  // Devices hwloc sees (with their node) and those only the kernel lists.
  std::vector<std::string> seen;
  out += "  rdma devices:\n";
  for (const std::string &dev : topo.rdma_devices()) {
    seen.push_back(dev);
    out += cat("    ", dev, ": NUMA node ", topo.device_node(dev), "\n");
  }
  for (const auto &[dev, active] : kernel_rdma_devices()) {
    const int n = topo.device_node(dev);
    if (std::find(seen.begin(), seen.end(), dev) != seen.end()) {
      out += cat("    ", dev, active ? ": port active" : ": no active port", "\n");
      continue;
    }
    out += cat("    ", dev, active ? " (port active)" : " (no active port)", ": NUMA node ",
               n < 0 ? "unknown (no PCI parent, e.g. a software device)" : std::to_string(n), "\n");
  }
  if (seen.empty() && kernel_rdma_devices().empty()) out += "    (none)\n";
  out += cat(
      "  buffers: braid_mem_alloc(BRAID_NUMA_LOCAL) and internal scratch/staging on the rank's "
      "node (here: ",
      node < 0 ? "unbound, so scratch is not bound and BRAID_NUMA_LOCAL uses the current CPU's node"
               : std::to_string(node),
      "); transport bounce/receive buffers on the node nearest the device when known (ABI v2 "
      "device_numa_node), else the rank's node\n");
  return out;
}

}  // namespace braid_info
