#include "binding.hpp"

#include <hwloc/glibc-sched.h>

#include <stdexcept>

namespace braidrun {
namespace {

std::string list_text(hwloc_const_bitmap_t set) {
  char *text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set);
  std::string out = text ? text : "";
  free(text);
  return out;
}

std::string mask_text(hwloc_const_bitmap_t set) {
  char *text = nullptr;
  hwloc_bitmap_asprintf(&text, set);
  std::string out = text ? text : "";
  free(text);
  return out;
}

// Nodes that have CPUs, in logical order: a memory-only node cannot host a rank.
std::vector<hwloc_obj_t> nodes_with_cpus(hwloc_topology_t topo) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr); n != nullptr;
       n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n))
    if (n->cpuset != nullptr && !hwloc_bitmap_iszero(n->cpuset)) out.push_back(n);
  return out;
}

std::vector<hwloc_obj_t> cores_in(hwloc_topology_t topo, hwloc_const_cpuset_t within) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, nullptr); c != nullptr;
       c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, c))
    if (within == nullptr || hwloc_bitmap_isincluded(c->cpuset, within)) out.push_back(c);
  // Some virtual machines report no cores: each PU is then its own core.
  if (out.empty())
    for (hwloc_obj_t p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, nullptr); p != nullptr;
         p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, p))
      if (within == nullptr || hwloc_bitmap_isincluded(p->cpuset, within)) out.push_back(p);
  return out;
}

int node_of(hwloc_topology_t topo, hwloc_const_cpuset_t cpus) {
  int found = -1;
  for (hwloc_obj_t n : nodes_with_cpus(topo)) {
    if (!hwloc_bitmap_intersects(n->cpuset, cpus)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(n->os_index);
  }
  return found;
}

RankBinding describe(hwloc_topology_t topo, hwloc_const_cpuset_t cpus, bool bound,
                     std::string target) {
  RankBinding b;
  b.bound = bound;
  b.cpu_list = list_text(cpus);
  b.cpuset_hex = mask_text(cpus);
  b.node = node_of(topo, cpus);
  b.target = std::move(target);
  CPU_ZERO(&b.cpus);
  hwloc_cpuset_to_glibc_sched_affinity(topo, cpus, &b.cpus, sizeof b.cpus);
  return b;
}

}  // namespace

std::optional<BindTo> parse_bind_to(const std::string &text) {
  if (text == "none") return BindTo::none;
  if (text == "core") return BindTo::core;
  if (text == "numa") return BindTo::numa;
  return std::nullopt;
}

std::optional<MapBy> parse_map_by(const std::string &text) {
  if (text == "core") return MapBy::core;
  if (text == "numa") return MapBy::numa;
  return std::nullopt;
}

hwloc_topology_t load_topology() {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) throw std::runtime_error("hwloc_topology_init failed");
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    throw std::runtime_error("hwloc could not load the machine's topology");
  }
  // Ranks go only where braidrun itself may run: under taskset, numactl --cpunodebind or a
  // batch system's binding, the plan must not widen the mask it inherited (sched_setaffinity
  // would). hwloc follows cgroups but not the affinity mask. A replayed machine (XML) is not
  // this one, so its topology is left whole.
  if (hwloc_topology_is_thissystem(topo)) {
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine != nullptr && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_iszero(mine) &&
        !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(topo), mine)) {
      hwloc_topology_restrict(topo, mine, 0);
    }
    hwloc_bitmap_free(mine);
  }
  return topo;
}

BindTo default_bind_to(hwloc_topology_t topo, int local_ranks) {
  return static_cast<int>(cores_in(topo, nullptr).size()) >= local_ranks ? BindTo::core
                                                                         : BindTo::none;
}

BindingPlan plan_bindings(hwloc_topology_t topo, std::optional<BindTo> bind_to,
                          std::optional<MapBy> map_by, int local_ranks) {
  BindingPlan plan;
  const auto all_cores = cores_in(topo, nullptr);
  const auto nodes = nodes_with_cpus(topo);
  plan.bind_to = bind_to ? *bind_to : default_bind_to(topo, local_ranks);
  plan.map_by = map_by ? *map_by : plan.bind_to == BindTo::numa ? MapBy::numa : MapBy::core;
  const char *bind_name = plan.bind_to == BindTo::none   ? "none"
                          : plan.bind_to == BindTo::core ? "core"
                                                         : "numa";
  plan.policy = std::string("--bind-to ") + bind_name +
                (plan.map_by == MapBy::core ? " --map-by core" : " --map-by numa");
  if (!bind_to)
    plan.policy += " (default: " + std::to_string(all_cores.size()) +
                   (all_cores.size() == 1 ? " core " : " cores ") +
                   (plan.bind_to == BindTo::core ? ">= " : "< ") + std::to_string(local_ranks) +
                   " local ranks)";

  hwloc_const_cpuset_t whole = hwloc_topology_get_allowed_cpuset(topo);
  for (int i = 0; i < local_ranks; ++i) {
    if (plan.bind_to == BindTo::none || all_cores.empty() || nodes.empty()) {
      plan.ranks.push_back(describe(topo, whole, false, ""));
      continue;
    }
    const size_t ui = static_cast<size_t>(i);
    hwloc_obj_t core = nullptr;
    hwloc_obj_t node = nullptr;
    if (plan.map_by == MapBy::numa) {
      node = nodes[ui % nodes.size()];
      const auto node_cores = cores_in(topo, node->cpuset);
      if (!node_cores.empty()) core = node_cores[(ui / nodes.size()) % node_cores.size()];
    } else {
      core = all_cores[ui % all_cores.size()];
      for (hwloc_obj_t n : nodes)
        if (hwloc_bitmap_intersects(n->cpuset, core->cpuset)) node = n;
    }
    if (plan.bind_to == BindTo::numa && node != nullptr) {
      plan.ranks.push_back(
          describe(topo, node->cpuset, true, "NUMA node " + std::to_string(node->os_index)));
    } else if (core != nullptr) {
      plan.ranks.push_back(
          describe(topo, core->cpuset, true, "core " + std::to_string(core->logical_index)));
    } else {
      plan.ranks.push_back(describe(topo, whole, false, ""));
    }
  }
  for (RankBinding &a : plan.ranks) {
    if (!a.bound) continue;
    for (const RankBinding &b : plan.ranks) {
      cpu_set_t both;
      CPU_AND(&both, &a.cpus, &b.cpus);
      if (b.bound && CPU_COUNT(&both) > 0) ++a.sharers;
    }
  }
  return plan;
}

}  // namespace braidrun
