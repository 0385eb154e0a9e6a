// braid_mem_alloc's core (memory/mem_api.hpp) against the process's real topology, and, in the
// NumaReplayedProcess tests (run by CTest with HWLOC_XMLFILE set), against a replayed 2-node one.
#include "memory/mem_api.hpp"

#include <braid/braid.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "error.hpp"
#include "memory/region_registry.hpp"
#include "memory/topology.hpp"

namespace braid::detail {
namespace {

std::string failure_of(size_t bytes, int node) {
  try {
    void *p = mem_alloc(bytes, node, -1);
    mem_free(p);
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
    return f.message();
  }
  ADD_FAILURE() << "mem_alloc(" << bytes << ", " << node << ") succeeded";
  return {};
}

TEST(MemApi, NonexistentNodeNamesTheNodesThatExist) {
  const std::string nodes = Topology::get().node_list();
  EXPECT_EQ(failure_of(4096, 4095),
            "braid_mem_alloc: NUMA node 4095 does not exist; the nodes are: " + nodes +
                " (or BRAID_NUMA_LOCAL)");
  EXPECT_NE(failure_of(4096, -7).find("NUMA node -7 does not exist"), std::string::npos);
  EXPECT_NE(failure_of(0, 0).find("bytes is 0"), std::string::npos);
}

TEST(MemApi, AllocationIsAPageAlignedRegionFreedOnce) {
  const size_t before = RegionRegistry::instance().count();
  void *p = mem_alloc(10000, BRAID_NUMA_LOCAL, -1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::memset(p, 0x5a, 10000);
  auto r = RegionRegistry::instance().at(p);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->user);
  EXPECT_EQ(r->bytes, 10000u);
  mem_free(p);
  EXPECT_EQ(RegionRegistry::instance().count(), before);
  EXPECT_THROW(mem_free(p), Failure);  // twice
  int not_ours = 0;
  EXPECT_THROW(mem_free(&not_ours), Failure);
  EXPECT_NO_THROW(mem_free(nullptr));
}

TEST(MemApi, LocalOnAOneNodeMachineIsNodeZero) {
  if (Topology::get().nodes().size() != 1)
    GTEST_SKIP() << "this machine has NUMA nodes " << Topology::get().node_list();
  void *p = mem_alloc(4096, BRAID_NUMA_LOCAL, -1);
  EXPECT_EQ(RegionRegistry::instance().at(p)->node, 0) << "1 NUMA node: everything is node 0";
  mem_free(p);
  EXPECT_EQ(Topology::get().bound_node(), 0);
}

// Run with HWLOC_XMLFILE=tests/numa/topologies/two-nodes-hca-on-node1.xml.
TEST(NumaReplayedProcess, TheProcessTopologyIsTheReplayedOne) {
  if (std::getenv("HWLOC_XMLFILE") == nullptr) GTEST_SKIP() << "HWLOC_XMLFILE not set";
  const Topology &topo = Topology::get();
  EXPECT_EQ(topo.node_list(), "0, 1");
  EXPECT_EQ(topo.device_node("mlx5_0"), 1);
  EXPECT_EQ(failure_of(4096, 2),
            "braid_mem_alloc: NUMA node 2 does not exist; the nodes are: 0, 1 (or "
            "BRAID_NUMA_LOCAL)");
  // Node 1 exists in the replayed machine: the memory is given (unbound, as a replayed
  // topology cannot bind) and recorded as asked for node 1.
  void *p = mem_alloc(4096, 1, -1);
  EXPECT_EQ(RegionRegistry::instance().at(p)->node, 1);
  mem_free(p);
}

}  // namespace
}  // namespace braid::detail
