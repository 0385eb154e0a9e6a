// The node map every rank derives from the allgathered host identities, and the selection of
// the node-local paths by topology.
#include <gtest/gtest.h>

#include "error.hpp"
#include "node/node_map.hpp"
#include "selection/selection.hpp"

namespace braid {
namespace {

using detail::make_node_map;

TEST(NodeMap, GroupsRanksByIdentityWithTheLowestRankAsLeader) {
  // Interleaved: a b a c b a
  const std::vector<std::string> ids = {"a", "b", "a", "c", "b", "a"};
  auto m = make_node_map(ids, 4);
  EXPECT_EQ(m.nodes, 3);
  EXPECT_EQ(m.node, 1);
  EXPECT_EQ(m.local, (std::vector<int>{1, 4}));
  EXPECT_EQ(m.local_rank, 1);
  EXPECT_FALSE(m.leader());
  EXPECT_EQ(m.leaders, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(m.node_of, (std::vector<int>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(m.local_index, (std::vector<int>{0, 0, 1, 0, 1, 2}));
  EXPECT_EQ(m.max_local, 3);
  auto leader = make_node_map(ids, 3);
  EXPECT_TRUE(leader.leader());
  EXPECT_EQ(leader.local_size(), 1);
}

TEST(NodeMap, OneNode) {
  auto m = make_node_map({"h", "h", "h"}, 2);
  EXPECT_EQ(m.nodes, 1);
  EXPECT_EQ(m.local_rank, 2);
  EXPECT_EQ(m.max_local, 3);
}

TEST(SelectionTopology, NodeLocalPathsFollowTheLayout) {
  const auto t = coll::SelectionTable::defaults();
  using coll::CollKind;
  coll::Topology one{4, 1, 4, true};
  EXPECT_STREQ(t.choose(CollKind::allreduce, 8, 2, one).algorithm->name, "shm");
  EXPECT_STREQ(t.choose(CollKind::allreduce, 64 << 20, 16 << 20, one).algorithm->name, "shm");
  EXPECT_STREQ(t.choose(CollKind::broadcast, 8, 2, one).algorithm->name, "shm");
  coll::Topology two{8, 2, 4, true};
  EXPECT_STREQ(t.choose(CollKind::allreduce, 1 << 20, 1 << 18, two).algorithm->name,
               "hierarchical");
  EXPECT_STREQ(t.choose_among_leaders(CollKind::allreduce, 1 << 20, 1 << 18, two).algorithm->name,
               "ring");
  EXPECT_STREQ(t.choose(CollKind::broadcast, 8, 2, two).algorithm->name, "hierarchical");
  // Off, or one rank per node: the flat table, as before.
  coll::Topology off = one;
  off.intranode = false;
  EXPECT_STREQ(t.choose(CollKind::allreduce, 8, 2, off).algorithm->name, "recursive_doubling");
  coll::Topology spread{4, 4, 1, true};
  EXPECT_STREQ(t.choose(CollKind::allreduce, 1 << 20, 1 << 18, spread).algorithm->name, "ring");
  // Fewer elements than ranks still goes through shared memory on one node.
  EXPECT_STREQ(t.choose(CollKind::allreduce, 4, 1, one).algorithm->name, "shm");
}

TEST(SelectionTopology, ForcingANodeLocalPathWhereItCannotRunIsAnError) {
  auto t = coll::SelectionTable::defaults();
  t.set_override(coll::CollKind::allreduce, "shm");
  coll::Topology two{4, 2, 2, true};
  EXPECT_THROW(t.choose(coll::CollKind::allreduce, 8, 2, two), detail::Failure);
  coll::Topology one{4, 1, 4, true};
  EXPECT_STREQ(t.choose(coll::CollKind::allreduce, 8, 2, one).algorithm->name, "shm");
  // The leaders never run a node-local algorithm, forced or not.
  t.set_override(coll::CollKind::allreduce, "hierarchical");
  EXPECT_STREQ(t.choose_among_leaders(coll::CollKind::allreduce, 8, 2, two).algorithm->name,
               "recursive_doubling");
}

}  // namespace
}  // namespace braid
