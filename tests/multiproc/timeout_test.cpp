// A rank that never enters a collective: the others get BRAID_ERR_TIMEOUT after BRAID_TIMEOUT,
// with a message naming the peer they waited for and the collective's kind and sequence number.
// Runs only when BRAID_TEST_TIMEOUT=1 (its CTest entry sets it and a 2 s timeout, 2 ranks).
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "rank_env.hpp"

namespace mp {
namespace {

bool timeout_enabled() {
  const char *v = std::getenv("BRAID_TEST_TIMEOUT");
  return v != nullptr && v[0] == '1';
}

TEST(Timeout, ErrorNamesThePeerAndTheCollective) {
  if (!timeout_enabled()) GTEST_SKIP() << "set BRAID_TEST_TIMEOUT=1 and BRAID_TIMEOUT=2";
  ASSERT_EQ(size(), 2);
  const double timeout_s = std::atof(std::getenv("BRAID_TIMEOUT"));
  ASSERT_GT(timeout_s, 0);
  // One successful collective first, so the failing one has sequence number 1.
  int v = 1;
  ASSERT_EQ(braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS);
  if (rank() == 1) {
    // Stay away from the next collective for longer than the other rank's timeout.
    std::this_thread::sleep_for(std::chrono::duration<double>(timeout_s * 2 + 1));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  braid_result_t rc = braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world());
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(rc, BRAID_ERR_TIMEOUT);
  const std::string msg = braid_last_error();
  EXPECT_NE(msg.find("allreduce #1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("waiting for rank 1"), std::string::npos) << msg;
  // The error comes after the timeout, and not long after it (nothing waits unbounded).
  EXPECT_GE(waited, timeout_s * 0.99);
  EXPECT_LT(waited, timeout_s + 5);
}

}  // namespace
}  // namespace mp
