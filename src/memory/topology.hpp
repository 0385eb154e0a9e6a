// The machine's topology as hwloc sees it, loaded once per process (HWLOC_XMLFILE replays a
// saved one), with I/O discovery on so OS devices such as OpenFabrics `mlx5_0` are visible.
// NUMA nodes are named by their OS index everywhere in braid: the number numactl, move_pages(2)
// and /sys/devices/system/node use.
#pragma once

#include <hwloc.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace braid::detail {

class Topology {
 public:
  // The process's topology; the first call loads it (thread-safe). Throws Failure when hwloc
  // cannot load one (e.g. an unreadable HWLOC_XMLFILE).
  static const Topology &get();

  // A separate topology read from an hwloc XML file (tests replay machines this way).
  static std::unique_ptr<Topology> from_xml(const std::string &path);

  explicit Topology(hwloc_topology_t topo) : topo_(topo) {}
  ~Topology();
  Topology(const Topology &) = delete;
  Topology &operator=(const Topology &) = delete;

  hwloc_topology_t handle() const { return topo_; }
  // Whether the topology describes this machine (not an XML replay of another): only then can
  // memory and CPUs actually be bound.
  bool is_this_system() const;

  // OS indexes of every NUMA node, ascending.
  std::vector<int> nodes() const;
  bool has_node(int node) const;
  // "0, 1": for error messages naming the nodes that exist.
  std::string node_list() const;
  // The node whose CPUs alone intersect `cpus`; -1 when they span several nodes or none.
  int node_of_cpus(hwloc_const_cpuset_t cpus) const;
  // The node of the calling process's CPU affinity (sched_getaffinity); -1 if it spans several.
  int bound_node() const;
  // The node nearest an OS device ("mlx5_0", "rxe0", "eth0"): the nodes local to its closest
  // non-I/O ancestor, when that is exactly one node. -1 when unknown (no such device, or a
  // software device such as rxe0 with no PCI parent, on a machine with several nodes).
  int device_node(const std::string &os_device) const;
  // Names of the OpenFabrics (RDMA) OS devices hwloc sees.
  std::vector<std::string> rdma_devices() const;
  // The first last-level cache (L3, else L2) in hwloc's order: its size and how many cores
  // share it; zeros where hwloc knows none.
  struct Cache {
    size_t bytes = 0;
    int cores = 0;
  };
  Cache last_level_cache() const;
  int cores() const;
  // One line: "2 NUMA nodes (0: 1 PU, 1951 MiB; 1: ...), 2 cores, 2 PUs".
  std::string summary() const;

 private:
  hwloc_topology_t topo_;
};

}  // namespace braid::detail
