// Whether a rank is oversubscribed, from every rank's machine and CPU affinity mask (what node
// discovery exchanges): a rank bound to a core of its own (one CPU in its mask) is not, as
// under mpirun --bind-to core or srun --cpu-bind; more ranks than CPUs on shared masks are.
// And the home CPU such ranks return to after a long wait (node/home_cpu.hpp).
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "node/node_discovery.hpp"

namespace braid::detail {
namespace {

CpuClaim on(uint64_t machine, std::initializer_list<int> cpus) {
  CpuClaim c;
  c.machine = machine;
  for (int cpu : cpus) c.cpus[static_cast<size_t>(cpu / 64)] |= uint64_t{1} << (cpu % 64);
  return c;
}

TEST(Oversubscription, RanksBoundToCoresOfTheirOwnAreNot) {
  const std::vector<CpuClaim> ranks = {on(1, {0}), on(1, {1})};
  EXPECT_FALSE(oversubscribed(ranks, 0));
  EXPECT_FALSE(oversubscribed(ranks, 1));
}

TEST(Oversubscription, UnboundRanksAreWhenTheyOutnumberTheCpus) {
  EXPECT_FALSE(oversubscribed({on(1, {0, 1}), on(1, {0, 1})}, 0));
  const std::vector<CpuClaim> four = {on(1, {0, 1}), on(1, {0, 1}), on(1, {0, 1}), on(1, {0, 1})};
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(oversubscribed(four, r)) << r;
}

TEST(Oversubscription, RanksStackedOnOneCoreAreTheOthersAreNot) {
  // mpirun --oversubscribe --bind-to core with 3 ranks on 2 cores: ranks 0 and 2 share core 0.
  const std::vector<CpuClaim> ranks = {on(1, {0}), on(1, {1}), on(1, {0})};
  EXPECT_TRUE(oversubscribed(ranks, 0));
  EXPECT_FALSE(oversubscribed(ranks, 1));
  EXPECT_TRUE(oversubscribed(ranks, 2));
}

TEST(Oversubscription, OnlyRanksOfTheSameMachineCompete) {
  // Two machines, each with one rank on CPU 0; and CPUs above 64 (a second mask word).
  EXPECT_FALSE(oversubscribed({on(1, {0}), on(2, {0})}, 0));
  EXPECT_FALSE(oversubscribed({on(1, {70}), on(1, {71})}, 1));
  EXPECT_TRUE(oversubscribed({on(1, {70}), on(1, {70})}, 1));
}

TEST(HomeCpuChoice, RanksSharingAMaskTakeItsCpusInTurn) {
  const std::vector<CpuClaim> four(4, on(1, {0, 1}));
  EXPECT_EQ(home_cpu_of(four, 0), 0);
  EXPECT_EQ(home_cpu_of(four, 1), 1);
  EXPECT_EQ(home_cpu_of(four, 2), 0);
  EXPECT_EQ(home_cpu_of(four, 3), 1);
  // The mask's own CPUs, across mask words.
  const std::vector<CpuClaim> high(3, on(1, {5, 70}));
  EXPECT_EQ(home_cpu_of(high, 0), 5);
  EXPECT_EQ(home_cpu_of(high, 1), 70);
  EXPECT_EQ(home_cpu_of(high, 2), 5);
}

TEST(HomeCpuChoice, NoneWithoutOversubscriptionOrWithOneCpu) {
  EXPECT_EQ(home_cpu_of(std::vector<CpuClaim>(2, on(1, {0, 1})), 0), -1);  // enough CPUs
  EXPECT_EQ(home_cpu_of(std::vector<CpuClaim>(3, on(1, {0})), 1), -1);     // bound: nowhere to go
}

TEST(HomeCpuChoice, OnlyRanksOfTheSameMachineAndMaskCount) {
  // Ranks 1 and 3 are on another machine, rank 2 has another mask: rank 0 shares {0, 1} with
  // rank 4 only, which the two CPUs hold.
  const std::vector<CpuClaim> ranks = {on(1, {0, 1}), on(2, {0, 1}), on(1, {0, 1, 2}),
                                       on(2, {0, 1}), on(1, {0, 1})};
  EXPECT_EQ(home_cpu_of(ranks, 0), -1);
  EXPECT_EQ(home_cpu_of(ranks, 4), -1);
  // Machine 2 gets a third: ranks 1, 3 and 5 there take CPUs 0, 1, 0.
  std::vector<CpuClaim> more = ranks;
  more.push_back(on(2, {0, 1}));
  EXPECT_EQ(home_cpu_of(more, 1), 0);
  EXPECT_EQ(home_cpu_of(more, 3), 1);
  EXPECT_EQ(home_cpu_of(more, 5), 0);
}

}  // namespace
}  // namespace braid::detail
