// The tests' port picker (tests/common/free_port.hpp): a port outside the kernel's ephemeral
// range, which outgoing connections of tests running alongside cannot take, and free to bind.
#include <gtest/gtest.h>

#include <fstream>

#include "common/free_port.hpp"

namespace {

TEST(FreePort, IsBelowTheEphemeralRangeAndFree) {
  int first_ephemeral = 0;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> first_ephemeral;
  if (first_ephemeral <= 11000) GTEST_SKIP() << "ephemeral ports start at " << first_ephemeral;
  for (int i = 0; i < 20; ++i) {
    const uint16_t port = braid::test::free_port();
    EXPECT_GE(port, 10000);
    EXPECT_LT(port, first_ephemeral);
    EXPECT_TRUE(braid::test::port_bindable(port)) << port;
  }
}

}  // namespace
