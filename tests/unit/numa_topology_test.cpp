// The topology helpers on machines replayed from hwloc XML (tests/numa/topologies): two NUMA
// nodes with an InfiniBand HCA (OpenFabrics mlx5_0) under node 1, and a one-node machine.
#include "memory/topology.hpp"

#include <gtest/gtest.h>

#include "error.hpp"

#include <memory>
#include <string>
#include <vector>

#ifndef BRAID_NUMA_TOPOLOGY_DIR
#error "BRAID_NUMA_TOPOLOGY_DIR must name tests/numa/topologies"
#endif

namespace braid::detail {
namespace {

std::unique_ptr<Topology> replay(const std::string &file) {
  return Topology::from_xml(std::string(BRAID_NUMA_TOPOLOGY_DIR) + "/" + file);
}

// A cpuset holding the given PU OS indexes.
struct Cpus {
  explicit Cpus(std::initializer_list<unsigned> pus) : set(hwloc_bitmap_alloc()) {
    for (unsigned pu : pus) hwloc_bitmap_set(set, pu);
  }
  ~Cpus() { hwloc_bitmap_free(set); }
  hwloc_bitmap_t set;
};

TEST(NumaTopology, TwoNodesAreListedByOsIndex) {
  auto topo = replay("two-nodes-hca-on-node1.xml");
  EXPECT_FALSE(topo->is_this_system());
  EXPECT_EQ(topo->nodes(), (std::vector<int>{0, 1}));
  EXPECT_EQ(topo->node_list(), "0, 1");
  EXPECT_TRUE(topo->has_node(0));
  EXPECT_TRUE(topo->has_node(1));
  EXPECT_FALSE(topo->has_node(2));
  EXPECT_FALSE(topo->has_node(-1));
  EXPECT_NE(topo->summary().find("2 NUMA nodes (0: 2 PUs"), std::string::npos) << topo->summary();
}

TEST(NumaTopology, MachineWithoutCachesHasNoLastLevelCache) {
  // The replays list no caches: nothing decides to stream copies past one (NodeChannel::streams).
  auto topo = replay("two-nodes-hca-on-node1.xml");
  EXPECT_EQ(topo->last_level_cache().bytes, 0u);
  EXPECT_EQ(topo->last_level_cache().cores, 0);
}

TEST(NumaTopology, HcaUnderNodeOneIsNearNodeOne) {
  auto topo = replay("two-nodes-hca-on-node1.xml");
  EXPECT_EQ(topo->rdma_devices(), (std::vector<std::string>{"mlx5_0"}));
  EXPECT_EQ(topo->device_node("mlx5_0"), 1);
  EXPECT_EQ(topo->device_node("ib0"), 1);   // its network interface, same PCI device
  EXPECT_EQ(topo->device_node("eth0"), 0);  // a NIC under node 0
  // Not in the topology (like rxe0, which has no PCI parent): unknown, not a guess.
  EXPECT_EQ(topo->device_node("rxe0"), -1);
}

TEST(NumaTopology, CpusInsideOneNodeNameThatNode) {
  auto topo = replay("two-nodes-hca-on-node1.xml");
  EXPECT_EQ(topo->node_of_cpus(Cpus{0}.set), 0);
  EXPECT_EQ(topo->node_of_cpus(Cpus{2, 3}.set), 1);
  EXPECT_EQ(topo->node_of_cpus(Cpus{1, 2}.set), -1);  // spans both: unbound
  EXPECT_EQ(topo->node_of_cpus(Cpus{0, 1, 2, 3}.set), -1);
  EXPECT_EQ(topo->node_of_cpus(Cpus{}.set), -1);
}

TEST(NumaTopology, OneNodeMachineIsAllNodeZero) {
  auto topo = replay("one-node.xml");
  EXPECT_EQ(topo->nodes(), (std::vector<int>{0}));
  EXPECT_EQ(topo->node_of_cpus(Cpus{0, 1}.set), 0);  // even unbound, everything is node 0
  EXPECT_FALSE(topo->has_node(1));
  EXPECT_TRUE(topo->rdma_devices().empty());
}

TEST(NumaTopology, UnreadableXmlIsAnError) {
  EXPECT_THROW(replay("does-not-exist.xml"), Failure);
}

}  // namespace
}  // namespace braid::detail
