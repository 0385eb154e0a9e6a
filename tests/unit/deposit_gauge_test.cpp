// DepositGauge: a rank's ordinary deposits slower than 8 GB/s mean a slow spell of the
// core-to-core link, in which its deposits stream but for one ordinary probe in kProbeEvery;
// a probe at the fast rate ends the spell. Deposits too small to time say nothing.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "intranode/deposit_gauge.hpp"

namespace braid::coll {
namespace {

constexpr size_t kDeposit = size_t{64} << 10;
constexpr uint64_t kSlowDepositNs = kDeposit / 3;   // 3 GB/s, as in a slow spell
constexpr uint64_t kFastDepositNs = kDeposit / 30;  // 30 GB/s, as on a fast day

TEST(DepositGauge, OrdinaryUntilADepositIsSlow) {
  DepositGauge g;
  for (int i = 0; i < 100; ++i) {
    ASSERT_FALSE(g.streams(kDeposit));
    g.ordinary(kDeposit, kFastDepositNs);
  }
  EXPECT_FALSE(g.slow());
  g.ordinary(kDeposit, kSlowDepositNs);
  EXPECT_TRUE(g.slow());
  EXPECT_TRUE(g.streams(kDeposit));
}

TEST(DepositGauge, ASlowSpellStreamsAndProbesUntilItEnds) {
  DepositGauge g;
  g.ordinary(kDeposit, kSlowDepositNs);
  for (int spell = 0; spell < 3; ++spell) {  // every probe still slow
    for (uint32_t i = 1; i < DepositGauge::kProbeEvery; ++i)
      ASSERT_TRUE(g.streams(kDeposit)) << "deposit " << i << " of spell " << spell;
    ASSERT_FALSE(g.streams(kDeposit)) << "the probe";
    g.ordinary(kDeposit, kSlowDepositNs);
  }
  for (uint32_t i = 1; i < DepositGauge::kProbeEvery; ++i) ASSERT_TRUE(g.streams(kDeposit));
  ASSERT_FALSE(g.streams(kDeposit));
  g.ordinary(kDeposit, kFastDepositNs);  // the probe finds the link fast again
  EXPECT_FALSE(g.slow());
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(g.streams(kDeposit));
}

TEST(DepositGauge, SmallDepositsSayNothing) {
  DepositGauge g;
  g.ordinary(DepositGauge::kMinBytes - 1, 1'000'000);
  EXPECT_FALSE(g.slow());
  g.ordinary(kDeposit, kSlowDepositNs);
  g.ordinary(DepositGauge::kMinBytes - 1, 1);
  EXPECT_TRUE(g.slow());
  // In a slow spell they stream and do not bring the probe closer.
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(g.streams(DepositGauge::kMinBytes - 1));
  for (uint32_t i = 1; i < DepositGauge::kProbeEvery; ++i) ASSERT_TRUE(g.streams(kDeposit));
  EXPECT_FALSE(g.streams(kDeposit)) << "the probe";
}

TEST(DepositGauge, DepositRunsTheCopyTheWayItSaysAndCountsStreamedOnes) {
  DepositGauge g;
  int ordinary = 0, streamed = 0;
  auto copy = [&](bool s) { ++(s ? streamed : ordinary); };
  g.deposit(kDeposit, copy);  // timed: a real copy this short reads as fast or not at all
  EXPECT_EQ(ordinary, 1);
  EXPECT_EQ(streamed, 0);
  g.ordinary(kDeposit, kSlowDepositNs);
  g.deposit(kDeposit, copy);
  EXPECT_EQ(streamed, 1);
  EXPECT_EQ(g.streamed(), 1u);
  DepositGauge always;
  always.always_stream();  // BRAID_CACHE_BYTES=1
  for (int i = 0; i < 40; ++i) always.deposit(kDeposit, copy);
  EXPECT_EQ(always.streamed(), 40u);
}

}  // namespace
}  // namespace braid::coll
