// The node's shared-memory pool (node/node_pool.hpp): regions claimed, handed out through the
// mailboxes, given back zero-filled by their last user or kept warm, and a full pool saying so.
// Two handles on one file in one process stand for two ranks of a node: each maps the file on
// its own, as another process would.
#include "node/node_pool.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "node/shm_name.hpp"  // unlink_segment

namespace braid::detail {
namespace {

constexpr size_t kRegionBytes = (size_t{64} << 10) + 1;  // rounded up to whole pages

class NodePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = "/braid-node-pool-test-" + std::to_string(getpid());
    std::string why;
    leader_ = NodePool::create(name_, 3, kRegionBytes, keep_warm(), &why);
    ASSERT_NE(leader_, nullptr) << why;
    other_ = NodePool::open(name_, 3, kRegionBytes, &why);
    ASSERT_NE(other_, nullptr) << why;
  }
  void TearDown() override { unlink_segment(name_); }
  virtual bool keep_warm() const { return false; }
  // NodePool::claim, checking that a pool that keeps none warm never hands out a warm one.
  int claim(const std::shared_ptr<NodePool> &pool, uint32_t users, bool *warm = nullptr) {
    bool was_warm = false;
    const int r = pool->claim(users, &was_warm);
    if (warm != nullptr) *warm = was_warm;
    if (!keep_warm()) {
      EXPECT_FALSE(was_warm) << "region " << r;
    }
    return r;
  }

  std::string name_;
  std::shared_ptr<NodePool> leader_;
  std::shared_ptr<NodePool> other_;
};

TEST_F(NodePoolTest, RegionsAreWholePagesAndTheNameIsExclusive) {
  EXPECT_EQ(leader_->region_bytes() % static_cast<size_t>(sysconf(_SC_PAGESIZE)), 0u);
  EXPECT_GE(leader_->region_bytes(), kRegionBytes);
  std::string why;
  EXPECT_EQ(NodePool::create(name_, 3, kRegionBytes, false, &why), nullptr);
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
  const int region = claim(leader_, 2);
  ASSERT_GE(region, 0);
  EXPECT_EQ(leader_->users(region), 2u);
  leader_->post(1, 7, region);
  EXPECT_EQ(other_->collect(2, 7), -1) << "another rank's box";
  EXPECT_EQ(other_->collect(1, 6), -1) << "another context's box";
  EXPECT_EQ(other_->collect(1, 7), region);
  EXPECT_EQ(other_->collect(1, 7), -1) << "collecting empties the box";

  std::string why;
  char *a = leader_->map(region, &why);
  ASSERT_NE(a, nullptr) << why;
  char *b = other_->map(region, &why);
  ASSERT_NE(b, nullptr) << why;
  EXPECT_NE(a, b) << "each handle maps the file on its own";
  EXPECT_EQ(leader_->map(region, &why), a) << "and once";
  std::memcpy(a + 100, "region", 6);
  EXPECT_EQ(std::memcmp(b + 100, "region", 6), 0);
  // Another region is other memory.
  const int next = claim(leader_, 2);
  ASSERT_GE(next, 0);
  EXPECT_NE(next, region);
  char *c = other_->map(next, &why);
  ASSERT_NE(c, nullptr) << why;
  EXPECT_NE(std::memcmp(c + 100, "region", 6), 0);
  leader_->unclaim(next);
  EXPECT_EQ(leader_->users(next), 0u);
}

TEST_F(NodePoolTest, TheLastUserGivesTheRegionBackZeroFilled) {
  const int region = claim(leader_, 2);
  ASSERT_GE(region, 0);
  std::string why;
  char *a = leader_->map(region, &why);
  ASSERT_NE(a, nullptr) << why;
  std::memset(a, 0xab, leader_->region_bytes());
  other_->leave(region);
  EXPECT_EQ(leader_->users(region), 1u) << "one user left";
  EXPECT_EQ(claim(leader_, 1), region + 1) << "the region is still held";
  leader_->unclaim(region + 1);
  leader_->leave(region);
  EXPECT_EQ(leader_->users(region), 0u);
  leader_->leave(region);  // once too often: nothing happens
  EXPECT_EQ(leader_->users(region), 0u);

  ASSERT_EQ(claim(other_, 2), region) << "the lowest free region again";
  char *b = other_->map(region, &why);
  ASSERT_NE(b, nullptr) << why;
  const std::vector<char> zeros(other_->region_bytes(), 0);
  EXPECT_EQ(std::memcmp(b, zeros.data(), zeros.size()), 0)
      << "the next communicator starts from zeros";
  EXPECT_EQ(std::memcmp(a, zeros.data(), zeros.size()), 0) << "in every mapping of it";
}

// A pool that keeps freed regions warm: up to kKeepWarm keep their bytes (and every process's
// mapping of them) and are taken before any other; the ones freed beyond come back zero-filled.
class WarmNodePoolTest : public NodePoolTest {
 protected:
  bool keep_warm() const override { return true; }
};

TEST_F(WarmNodePoolTest, FreedRegionsStayWarmUpToTheLimitAndAreTakenFirst) {
  EXPECT_TRUE(leader_->keeps_warm());
  EXPECT_TRUE(other_->keeps_warm()) << "the leader's choice is in the file";
  constexpr int kFreed = static_cast<int>(NodePool::kKeepWarm) + 2;
  const size_t bytes = leader_->region_bytes();
  std::string why;
  std::vector<int> regions;
  for (int i = 0; i < kFreed; ++i) {
    bool warm = true;
    const int r = claim(leader_, 1, &warm);
    ASSERT_GE(r, 0);
    EXPECT_FALSE(warm) << "nothing was freed yet";
    char *m = leader_->map(r, &why);
    ASSERT_NE(m, nullptr) << why;
    std::memset(m, 0x40 + i, bytes);
    regions.push_back(r);
  }
  for (int r : regions) leader_->leave(r);
  std::vector<int> warm_ones;
  for (int r : regions)
    if (leader_->users(r) == NodePool::kWarm) warm_ones.push_back(r);
  EXPECT_EQ(warm_ones.size(), size_t{NodePool::kKeepWarm});
  // The warm ones are taken first, with their bytes, in both mappings; then the zero-filled.
  std::vector<int> again;
  for (int i = 0; i < kFreed; ++i) {
    bool warm = false;
    const int r = claim(other_, 1, &warm);
    ASSERT_GE(r, 0);
    again.push_back(r);
    const auto at =
        static_cast<size_t>(std::find(regions.begin(), regions.end(), r) - regions.begin());
    ASSERT_LT(at, regions.size()) << "claim " << i << " took region " << r;
    EXPECT_EQ(warm, i < static_cast<int>(NodePool::kKeepWarm)) << "claim " << i;
    char *m = other_->map(r, &why);
    ASSERT_NE(m, nullptr) << why;
    const char expect = warm ? static_cast<char>(0x40 + at) : 0;
    EXPECT_EQ(m[0], expect) << "claim " << i << ", region " << r;
    EXPECT_EQ(m[bytes - 1], expect) << "claim " << i << ", region " << r;
    EXPECT_EQ(leader_->map(r, &why)[0], expect) << "the first mapping sees the same bytes";
  }
  // Taking a warm region gave its place back: the first two freed again are kept again, one
  // of them by unclaim (a claim nobody used).
  other_->leave(again[0]);
  other_->unclaim(again[1]);
  EXPECT_EQ(other_->users(again[0]), NodePool::kWarm);
  EXPECT_EQ(other_->users(again[1]), NodePool::kWarm);
  other_->leave(again[2]);
  EXPECT_EQ(other_->users(again[2]), 0u) << "two are warm already";
  other_->leave(again[3]);
}

TEST_F(NodePoolTest, AFullPoolSaysSoAndAFreedRegionIsTakenAgain) {
  std::vector<int> taken;
  for (uint32_t i = 0; i < NodePool::kRegions; ++i) {
    const int r = claim(leader_, 1);
    ASSERT_GE(r, 0) << "claim " << i;
    taken.push_back(r);
  }
  EXPECT_EQ(claim(other_, 1), -1);
  other_->leave(taken[17]);
  EXPECT_EQ(claim(other_, 1), taken[17]);
}

TEST_F(NodePoolTest, LeasesLeaveWhenDestroyedOrMoved) {
  const int region = claim(leader_, 2);
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
