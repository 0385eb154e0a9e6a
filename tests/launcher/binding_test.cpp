// braidrun's binding plan on a replayed 2-node, 4-core machine (tests/numa/topologies).
#include "binding.hpp"

#include <gtest/gtest.h>

#include <string>

namespace braidrun {
namespace {

struct Replayed {
  explicit Replayed(const char *file) {
    hwloc_topology_init(&topo);
    const std::string path = std::string(BRAID_NUMA_TOPOLOGY_DIR) + "/" + file;
    EXPECT_EQ(hwloc_topology_set_xml(topo, path.c_str()), 0) << path;
    EXPECT_EQ(hwloc_topology_load(topo), 0);
  }
  ~Replayed() { hwloc_topology_destroy(topo); }
  hwloc_topology_t topo = nullptr;
};

TEST(Binding, NumaPutsRankIOnNodeIModNodes) {
  Replayed m("two-nodes-hca-on-node1.xml");
  const BindingPlan plan = plan_bindings(m.topo, BindTo::numa, std::nullopt, 5);
  EXPECT_EQ(plan.map_by, MapBy::numa);
  ASSERT_EQ(plan.ranks.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(plan.ranks[i].bound);
    EXPECT_EQ(plan.ranks[i].node, static_cast<int>(i % 2));
    EXPECT_EQ(plan.ranks[i].cpu_list, i % 2 == 0 ? "0-1" : "2-3");
    EXPECT_EQ(plan.ranks[i].target, "NUMA node " + std::to_string(i % 2));
  }
  EXPECT_EQ(plan.ranks[0].sharers, 3);  // ranks 0, 2, 4 share node 0
}

TEST(Binding, CoreMapByCoreFillsConsecutiveCores) {
  Replayed m("two-nodes-hca-on-node1.xml");
  const BindingPlan plan = plan_bindings(m.topo, BindTo::core, MapBy::core, 3);
  EXPECT_EQ(plan.ranks[0].cpu_list, "0");
  EXPECT_EQ(plan.ranks[1].cpu_list, "1");
  EXPECT_EQ(plan.ranks[2].cpu_list, "2");
  EXPECT_EQ(plan.ranks[2].node, 1);
  EXPECT_EQ(plan.ranks[0].sharers, 1);
}

TEST(Binding, CoreMapByNumaAlternatesNodes) {
  Replayed m("two-nodes-hca-on-node1.xml");
  const BindingPlan plan = plan_bindings(m.topo, BindTo::core, MapBy::numa, 4);
  EXPECT_EQ(plan.ranks[0].cpu_list, "0");
  EXPECT_EQ(plan.ranks[1].cpu_list, "2");
  EXPECT_EQ(plan.ranks[2].cpu_list, "1");
  EXPECT_EQ(plan.ranks[3].cpu_list, "3");
}

TEST(Binding, DefaultIsCoreUpToTheCoreCountThenNone) {
  Replayed m("two-nodes-hca-on-node1.xml");
  EXPECT_EQ(plan_bindings(m.topo, std::nullopt, std::nullopt, 4).bind_to, BindTo::core);
  const BindingPlan over = plan_bindings(m.topo, std::nullopt, std::nullopt, 5);
  EXPECT_EQ(over.bind_to, BindTo::none);
  EXPECT_FALSE(over.ranks[0].bound);
  EXPECT_NE(over.policy.find("default: 4 cores < 5 local ranks"), std::string::npos) << over.policy;
}

TEST(Binding, OneNodeMachineBindsEveryRankToNodeZero) {
  Replayed m("one-node.xml");
  const BindingPlan plan = plan_bindings(m.topo, BindTo::numa, std::nullopt, 2);
  EXPECT_EQ(plan.ranks[0].node, 0);
  EXPECT_EQ(plan.ranks[1].node, 0);
  EXPECT_EQ(plan.ranks[1].cpu_list, "0-1");
}

TEST(Binding, OptionValuesParse) {
  EXPECT_EQ(parse_bind_to("numa"), BindTo::numa);
  EXPECT_EQ(parse_bind_to("socket"), std::nullopt);
  EXPECT_EQ(parse_map_by("core"), MapBy::core);
  EXPECT_EQ(parse_map_by("numa"), MapBy::numa);
}

}  // namespace
}  // namespace braidrun
