// algbw and busbw as nccl-tests defines them, at 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include "bandwidth.hpp"

namespace braid_bench {
namespace {

TEST(Bandwidth, BusFactor) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 8), 1.75);
  for (int n : {1, 2, 4}) {
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::broadcast, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::barrier, n), 0.0) << n;
  }
}

TEST(Bandwidth, AlgbwIsBytesOverTimeInGBPerSecond) {
  EXPECT_DOUBLE_EQ(algbw_gbps(1000000000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(algbw_gbps(64u << 20, 0.010), 6.7108864);
  EXPECT_DOUBLE_EQ(algbw_gbps(8, 2e-6), 0.004);
  EXPECT_DOUBLE_EQ(algbw_gbps(8, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(algbw_gbps(8, -1.0), 0.0);
}

TEST(Bandwidth, BusbwAtOneTwoAndFourRanks) {
  const size_t bytes = 64u << 20;
  const double t = 0.010;
  const double alg = 6.7108864;
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::allreduce, 1, bytes, t), 0.0);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::allreduce, 2, bytes, t), alg);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::allreduce, 4, bytes, t), alg * 1.5);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::broadcast, 1, bytes, t), alg);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::broadcast, 2, bytes, t), alg);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::broadcast, 4, bytes, t), alg);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::barrier, 4, 0, t), 0.0);
}

}  // namespace
}  // namespace braid_bench
