#include "memory/topology.hpp"

#include <hwloc/glibc-sched.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "error.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

hwloc_topology_t load_topology(const char *xml_path = nullptr) {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) fail(BRAID_ERR_INTERNAL, "hwloc_topology_init failed");
  if (xml_path != nullptr && hwloc_topology_set_xml(topo, xml_path) != 0) {
    hwloc_topology_destroy(topo);
    fail(BRAID_ERR_INVALID_ARGUMENT, "hwloc cannot read the XML topology ", xml_path);
  }
  // PCI devices and their OS devices (OpenFabrics, network) are needed to place buffers near
  // the HCA; bridges and unimportant devices are dropped to keep the tree small.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // The linux backend finds those PCI devices and OS devices in sysfs by itself; the "pci"
  // component (libpciaccess) only adds vendor and device names, parsed from the whole pci.ids
  // file one realloc per entry: a few ms per rank, seconds per rank under the sanitizers (whose
  // realloc always copies), for names braid never reads.
  if (xml_path == nullptr)
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    const char *xml = std::getenv("HWLOC_XMLFILE");
    fail(BRAID_ERR_INTERNAL, "hwloc could not load the topology",
         xml ? cat(" from HWLOC_XMLFILE=", xml) : std::string());
  }
  return topo;
}

}  // namespace

std::unique_ptr<Topology> Topology::from_xml(const std::string &path) {
  return std::make_unique<Topology>(load_topology(path.c_str()));
}

const Topology &Topology::get() {
  static std::once_flag once;
  // Never destroyed: destroying the last topology makes hwloc dlclose its plugins (hwloc_pci and
  // with it libpciaccess, whose pci.ids tables would then be stranded: LeakSanitizer reports them
  // in every process), and ranks may still ask for placement while static objects go away.
  static Topology *topology = nullptr;
  std::call_once(once, [] {
    topology = new Topology(load_topology());
    log(LogLevel::info, "topology: ", topology->summary(),
        topology->is_this_system() ? "" : " (replayed, not this machine)");
  });
  return *topology;
}

Topology::~Topology() {
  hwloc_topology_destroy(topo_);
}

bool Topology::is_this_system() const {
  return hwloc_topology_is_thissystem(topo_) != 0;
}

std::vector<int> Topology::nodes() const {
  std::vector<int> out;
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, nullptr); n != nullptr;
       n = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, n))
    out.push_back(static_cast<int>(n->os_index));
  std::sort(out.begin(), out.end());
  return out;
}

bool Topology::has_node(int node) const {
  if (node < 0) return false;
  return hwloc_get_numanode_obj_by_os_index(topo_, static_cast<unsigned>(node)) != nullptr;
}

std::string Topology::node_list() const {
  std::string list;
  for (int n : nodes()) list += cat(list.empty() ? "" : ", ", n);
  return list;
}

int Topology::node_of_cpus(hwloc_const_cpuset_t cpus) const {
  int found = -1;
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, nullptr); n != nullptr;
       n = hwloc_get_next_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, n)) {
    if (n->cpuset == nullptr || !hwloc_bitmap_intersects(n->cpuset, cpus)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(n->os_index);
  }
  return found;
}

int Topology::bound_node() const {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  hwloc_cpuset_from_glibc_sched_affinity(topo_, cpus, &set, sizeof set);
  int node = node_of_cpus(cpus);
  hwloc_bitmap_free(cpus);
  return node;
}

int Topology::device_node(const std::string &os_device) const {
  for (hwloc_obj_t d = hwloc_get_next_osdev(topo_, nullptr); d != nullptr;
       d = hwloc_get_next_osdev(topo_, d)) {
    if (d->name == nullptr || os_device != d->name) continue;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo_, d);
    if (anc == nullptr || anc->nodeset == nullptr) return -1;
    if (hwloc_bitmap_weight(anc->nodeset) != 1) return -1;
    return hwloc_bitmap_first(anc->nodeset);
  }
  return -1;
}

std::vector<std::string> Topology::rdma_devices() const {
  std::vector<std::string> out;
  for (hwloc_obj_t d = hwloc_get_next_osdev(topo_, nullptr); d != nullptr;
       d = hwloc_get_next_osdev(topo_, d))
    if (d->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && d->name != nullptr)
      out.push_back(d->name);
  return out;
}

Topology::Cache Topology::last_level_cache() const {
  for (const hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    const hwloc_obj_t c = hwloc_get_obj_by_type(topo_, type, 0);
    if (c != nullptr && c->attr != nullptr && c->cpuset != nullptr)
      return {static_cast<size_t>(c->attr->cache.size),
              hwloc_get_nbobjs_inside_cpuset_by_type(topo_, c->cpuset, HWLOC_OBJ_CORE)};
  }
  return {};
}

int Topology::cores() const {
  return hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE);
}

std::string Topology::summary() const {
  const int node_count = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
  std::string nodes_text;
  for (int os : nodes()) {
    hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(topo_, static_cast<unsigned>(os));
    const int pus = n->cpuset ? hwloc_bitmap_weight(n->cpuset) : 0;
    nodes_text += cat(nodes_text.empty() ? "" : "; ", os, ": ", pus, pus == 1 ? " PU, " : " PUs, ",
                      n->attr->numanode.local_memory >> 20, " MiB");
  }
  return cat(node_count, node_count == 1 ? " NUMA node (" : " NUMA nodes (", nodes_text, "), ",
             hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE), " cores, ",
             hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU), " PUs");
}

}  // namespace braid::detail
