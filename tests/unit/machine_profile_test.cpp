// The machine profile braid-tune writes and BRAID_TUNING_FILE reads back.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "error.hpp"
#include "tuning/machine_probe.hpp"
#include "tuning/machine_profile.hpp"

namespace braid::detail {
namespace {

MachineProfile sample() {
  MachineProfile p;
  p.core_a = 2;
  p.core_b = 5;
  p.handoff_rtt_ns = 335.5;
  p.memcpy_gbps = 48.25;
  p.memcpy_large_gbps = 8.5;
  p.window_copy_gbps = 12.75;
  p.reduce_gbps = 20;
  p.cma_gbps = 5.5;
  p.host = "node7";
  p.measured_at = "2026-11-24T07:00:00Z";
  return p;
}

TEST(MachineProfile, JsonRoundTrip) {
  std::string why;
  const auto p = profile_from_json(to_json(sample()), &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->core_a, 2);
  EXPECT_EQ(p->core_b, 5);
  EXPECT_DOUBLE_EQ(p->handoff_rtt_ns, 335.5);
  EXPECT_DOUBLE_EQ(p->memcpy_gbps, 48.25);
  EXPECT_DOUBLE_EQ(p->memcpy_large_gbps, 8.5);
  EXPECT_DOUBLE_EQ(p->window_copy_gbps, 12.75);
  EXPECT_DOUBLE_EQ(p->reduce_gbps, 20);
  EXPECT_DOUBLE_EQ(p->cma_gbps, 5.5);
  EXPECT_EQ(p->host, "node7");
  EXPECT_EQ(p->measured_at, "2026-11-24T07:00:00Z");
}

TEST(MachineProfile, MissingOrNegativeFieldsAreNamed) {
  std::string why;
  std::string text = to_json(sample());
  text.replace(text.find("\"cma_gbps\""), 10, "\"cmb_gbps\"");
  EXPECT_FALSE(profile_from_json(text, &why));
  EXPECT_NE(why.find("\"cma_gbps\""), std::string::npos) << why;
  text = to_json(sample());
  text.replace(text.find("335.5"), 5, "-3");
  EXPECT_FALSE(profile_from_json(text, &why));
  EXPECT_NE(why.find("handoff_rtt_ns"), std::string::npos) << why;
  // Zero and infinity would make predictions zero or infinite; CMA may be 0 (refused).
  for (const char *bad : {"0", "1e999", "inf"}) {
    text = to_json(sample());
    text.replace(text.find("335.5"), 5, bad);
    EXPECT_FALSE(profile_from_json(text, &why)) << bad;
    EXPECT_NE(why.find("handoff_rtt_ns"), std::string::npos) << why;
  }
  text = to_json(sample());
  text.replace(text.find("\"cma_gbps\": 5.5"), 15, "\"cma_gbps\": 0");
  EXPECT_TRUE(profile_from_json(text, &why)) << why;
}

TEST(MachineProfile, TuningFileFromTheEnvironment) {
  std::string why;
  unsetenv("BRAID_TUNING_FILE");
  EXPECT_FALSE(profile_from_environment(&why));
  EXPECT_TRUE(why.empty()) << why;

  const std::string path = ::testing::TempDir() + "braid_tuning_test.json";
  { std::ofstream(path) << to_json(sample()); }
  setenv("BRAID_TUNING_FILE", path.c_str(), 1);
  auto p = profile_from_environment(&why);
  ASSERT_TRUE(p) << why;
  EXPECT_DOUBLE_EQ(p->window_copy_gbps, 12.75);
  EXPECT_NE(describe(*p).find("core 2 <-> core 5 cache-line round trip: 336 ns"), std::string::npos)
      << describe(*p);

  { std::ofstream(path) << "{\"host\": \"x\"}"; }
  EXPECT_FALSE(profile_from_environment(&why));
  EXPECT_NE(why.find("BRAID_TUNING_FILE=" + path), std::string::npos) << why;
  EXPECT_NE(why.find("braid-tune"), std::string::npos) << why;
  setenv("BRAID_TUNING_FILE", (path + ".missing").c_str(), 1);
  EXPECT_FALSE(profile_from_environment(&why));
  EXPECT_NE(why.find("cannot be read"), std::string::npos) << why;
  unsetenv("BRAID_TUNING_FILE");
  std::remove(path.c_str());
}

// The probe itself on this machine: every figure measured and plausible (positive; a round trip
// between two cores takes longer than a nanosecond). Skipped on one core.
TEST(MachineProbe, MeasuresEveryFigure) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cores[2], found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &set)) cores[found++] = c;
  if (found < 2) GTEST_SKIP() << "one core only";
  const MachineProfile p = probe_machine(cores[0], cores[1]);
  EXPECT_GT(p.handoff_rtt_ns, 1.0);
  EXPECT_GT(p.memcpy_gbps, 0.0);
  EXPECT_GT(p.memcpy_large_gbps, 0.0);
  EXPECT_GT(p.window_copy_gbps, 0.0);
  EXPECT_GT(p.reduce_gbps, 0.0);
  EXPECT_GE(p.cma_gbps, 0.0);  // 0 where the kernel refuses process_vm_readv
  EXPECT_FALSE(p.measured_at.empty());
}

TEST(MachineProbe, RefusesACoreItMayNotUse) {
  EXPECT_THROW(probe_machine(0, CPU_SETSIZE - 1), Failure);
  EXPECT_THROW(probe_machine(0, 0), Failure);
}

}  // namespace
}  // namespace braid::detail
