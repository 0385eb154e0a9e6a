// The node's shared-memory pool (node/node_pool.hpp): regions claimed, handed out through the
// mailboxes, given back zero-filled by their last user, and a full pool saying so. Two handles
// on one file in one process stand for two ranks of a node: each maps the file on its own, as
// another process would.
#include "node/node_pool.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "node/shm_segment.hpp"

namespace braid::detail {
namespace {

constexpr size_t kRegionBytes = (size_t{64} << 10) + 1;  // rounded up to whole pages

class NodePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = "/braid-node-pool-test-" + std::to_string(getpid());
    std::string why;
    leader_ = NodePool::create(name_, 3, kRegionBytes, &why);
    ASSERT_NE(leader_, nullptr) << why;
    other_ = NodePool::open(name_, 3, kRegionBytes, &why);
    ASSERT_NE(other_, nullptr) << why;
  }
  void TearDown() override { unlink_segment(name_); }

  std::string name_;
  std::shared_ptr<NodePool> leader_;
  std::shared_ptr<NodePool> other_;
};

TEST_F(NodePoolTest, RegionsAreWholePagesAndTheNameIsExclusive) {
  EXPECT_EQ(leader_->region_bytes() % static_cast<size_t>(sysconf(_SC_PAGESIZE)), 0u);
  EXPECT_GE(leader_->region_bytes(), kRegionBytes);
  std::string why;
  EXPECT_EQ(NodePool::create(name_, 3, kRegionBytes, &why), nullptr);
  EXPECT_NE(why.find(name_), std::string::npos) << why;
}

TEST_F(NodePoolTest, OpeningWithOtherSizesIsRefusedNamingBoth) {
  std::string why;
  EXPECT_EQ(NodePool::open(name_, 4, kRegionBytes, &why), nullptr);
  EXPECT_NE(why.find("bytes"), std::string::npos) << why;
  why.clear();
  EXPECT_EQ(NodePool::open("/braid-node-pool-test-absent", 3, kRegionBytes, &why), nullptr);
  EXPECT_NE(why.find("braid-node-pool-test-absent"), std::string::npos) << why;
}

TEST_F(NodePoolTest, ARegionPostedByOneRankIsSharedWithTheOther) {
  const int region = leader_->claim(2);
  ASSERT_GE(region, 0);
  EXPECT_EQ(leader_->users(region), 2u);
  leader_->post(1, 7, region);
  EXPECT_EQ(other_->collect(2, 7), -1) << "another rank's box";
  EXPECT_EQ(other_->collect(1, 6), -1) << "another context's box";
  EXPECT_EQ(other_->collect(1, 7), region);
  EXPECT_EQ(other_->collect(1, 7), -1) << "collecting empties the box";

  ShmSegment a;
  ShmSegment b;
  std::string why;
  ASSERT_TRUE(leader_->map(region, &a, &why)) << why;
  ASSERT_TRUE(other_->map(region, &b, &why)) << why;
  std::memcpy(a.data() + 100, "region", 6);
  EXPECT_EQ(std::memcmp(b.data() + 100, "region", 6), 0);
  // Another region is other memory.
  const int next = leader_->claim(2);
  ASSERT_GE(next, 0);
  EXPECT_NE(next, region);
  ShmSegment c;
  ASSERT_TRUE(other_->map(next, &c, &why)) << why;
  EXPECT_NE(std::memcmp(c.data() + 100, "region", 6), 0);
  leader_->unclaim(next);
  EXPECT_EQ(leader_->users(next), 0u);
}

TEST_F(NodePoolTest, TheLastUserGivesTheRegionBackZeroFilled) {
  const int region = leader_->claim(2);
  ASSERT_GE(region, 0);
  std::string why;
  {
    ShmSegment a;
    ASSERT_TRUE(leader_->map(region, &a, &why)) << why;
    std::memset(a.data(), 0xab, a.size());
  }
  other_->leave(region);
  EXPECT_EQ(leader_->users(region), 1u) << "one user left";
  EXPECT_EQ(leader_->claim(1), region + 1) << "the region is still held";
  leader_->unclaim(region + 1);
  leader_->leave(region);
  EXPECT_EQ(leader_->users(region), 0u);
  leader_->leave(region);  // once too often: nothing happens
  EXPECT_EQ(leader_->users(region), 0u);

  ASSERT_EQ(other_->claim(2), region) << "the lowest free region again";
  ShmSegment b;
  ASSERT_TRUE(other_->map(region, &b, &why)) << why;
  const std::vector<char> zeros(b.size(), 0);
  EXPECT_EQ(std::memcmp(b.data(), zeros.data(), b.size()), 0)
      << "the next communicator starts from zeros";
}

TEST_F(NodePoolTest, AFullPoolSaysSoAndAFreedRegionIsTakenAgain) {
  std::vector<int> taken;
  for (uint32_t i = 0; i < NodePool::kRegions; ++i) {
    const int r = leader_->claim(1);
    ASSERT_GE(r, 0) << "claim " << i;
    taken.push_back(r);
  }
  EXPECT_EQ(other_->claim(1), -1);
  other_->leave(taken[17]);
  EXPECT_EQ(other_->claim(1), taken[17]);
}

TEST_F(NodePoolTest, LeasesLeaveWhenDestroyedOrMoved) {
  const int region = leader_->claim(2);
  ASSERT_GE(region, 0);
  {
    RegionLease one(leader_, region);
    RegionLease two(other_, region);
    RegionLease moved(std::move(two));
    EXPECT_EQ(moved.region(), region);
    EXPECT_EQ(two.region(), -1);  // NOLINT(bugprone-use-after-move): moved from on purpose
    EXPECT_EQ(leader_->users(region), 2u);
    one.reset();
    EXPECT_EQ(leader_->users(region), 1u);
    EXPECT_EQ(one.pool(), leader_) << "a lease keeps its pool after it left";
  }
  EXPECT_EQ(leader_->users(region), 0u);
}

}  // namespace
}  // namespace braid::detail
