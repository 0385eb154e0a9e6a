// Where each local rank runs: --bind-to none|core|numa and --map-by core|numa, computed from
// the machine's hwloc topology (HWLOC_XMLFILE replays another machine's) before any rank
// starts, and applied in the child with sched_setaffinity before exec.
#pragma once

#include <hwloc.h>
#include <sched.h>

#include <optional>
#include <string>
#include <vector>

namespace braidrun {

enum class BindTo { none, core, numa };
enum class MapBy { core, numa };

std::optional<BindTo> parse_bind_to(const std::string &text);
std::optional<MapBy> parse_map_by(const std::string &text);

struct RankBinding {
  bool bound = false;
  cpu_set_t cpus{};        // the affinity to set (meaningful when bound)
  std::string cpu_list;    // "0-3": the PUs (OS indexes) the rank may run on
  std::string cpuset_hex;  // hwloc's mask form, "0x0000000f"
  int node = -1;           // the NUMA node (OS index) those PUs belong to, -1 if several
  std::string target;      // "core 2", "NUMA node 1", "" when not bound
  int sharers = 0;         // bound local ranks whose CPUs overlap these, itself included
};

struct BindingPlan {
  BindTo bind_to = BindTo::none;
  MapBy map_by = MapBy::core;
  std::vector<RankBinding> ranks;  // one per local rank, in local rank order
  std::string policy;  // e.g. "--bind-to core --map-by core (default: 4 cores >= 2 ranks)"
};

// The default --bind-to: core when the machine has at least as many cores as local ranks,
// else none (binding oversubscribed ranks would only stack them on the same cores).
BindTo default_bind_to(hwloc_topology_t topo, int local_ranks);

// Rank i (local index) with --bind-to numa --map-by numa (the default mapping for numa) goes to
// node i mod (nodes with CPUs); with --bind-to core --map-by core to core i mod cores; with
// --map-by numa, ranks go round-robin over nodes and then over that node's cores.
BindingPlan plan_bindings(hwloc_topology_t topo, std::optional<BindTo> bind_to,
                          std::optional<MapBy> map_by, int local_ranks);

// Loads this machine's topology, restricted to the CPUs braidrun may run on (HWLOC_XMLFILE
// honoured, and then not restricted). Throws std::runtime_error.
hwloc_topology_t load_topology();

}  // namespace braidrun
