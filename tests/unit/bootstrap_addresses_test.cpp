// Forming a job when rank 0 chose its port at run time (BootstrapListener) and published several
// addresses: the other ranks use the first address that answers, and name them all when none
// does.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>

#include "bootstrap/socket.hpp"
#include "bootstrap_harness.hpp"

namespace braid::detail {
namespace {

using namespace braid::detail::testing;

TEST(BootstrapAddresses, ListenerPortIsChosenByTheKernel) {
  BootstrapListener a = BootstrapListener::on_any_interface(false);
  BootstrapListener b = BootstrapListener::on_any_interface(true);
  EXPECT_NE(a.port(), 0);
  EXPECT_NE(b.port(), 0);
  EXPECT_NE(a.port(), b.port());
}

TEST(BootstrapAddresses, RanksSkipAnAddressThatDoesNotAnswer) {
  constexpr int kSize = 3;
  auto listener = std::make_shared<BootstrapListener>(BootstrapListener::on_any_interface(false));
  const uint16_t port = listener->port();
  const uint16_t dead = free_port();  // nothing listens there
  auto outcomes = run_threads(kSize, [&](int rank) {
    BootstrapConfig cfg = config(rank, kSize, dead);
    cfg.more_addresses = {{"127.0.0.1", port}};
    std::unique_ptr<Bootstrap> b;
    if (rank == 0) {
      cfg.port = port;
      b = make_tcp_bootstrap(cfg, std::move(*listener));
    } else {
      b = make_tcp_bootstrap(cfg);
    }
    int mine = 10 + rank, all[kSize] = {};
    b->allgather(&mine, all, sizeof mine);
    return all[0] == 10 && all[1] == 11 && all[2] == 12 ? std::string() : std::string("bad data");
  });
  for (int r = 0; r < kSize; ++r) {
    EXPECT_TRUE(outcomes[r].ok) << "rank " << r << ": " << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data, "") << "rank " << r;
  }
}

TEST(BootstrapAddresses, NoAnsweringAddressNamesEveryAddressAndItsError) {
  const uint16_t a = free_port(), b = free_port();
  BootstrapConfig cfg = config(2, 3, a, "k", 0.5);
  cfg.more_addresses = {{"127.0.0.1", b}};
  try {
    make_tcp_bootstrap(cfg);
    FAIL() << "formed a job without rank 0";
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
    EXPECT_EQ(f.message(), cat("rank 2: could not reach rank 0 at any of its addresses (127.0.0.1:",
                               a, ", 127.0.0.1:", b, ") after 0.5 s: 127.0.0.1:", a,
                               ": Connection refused; 127.0.0.1:", b, ": Connection refused"));
  }
}

TEST(BootstrapAddresses, AListenerIsForRankZeroOnly) {
  try {
    make_tcp_bootstrap(config(1, 2, 1), BootstrapListener::on_any_interface(false));
    FAIL();
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INTERNAL);
  }
}

}  // namespace
}  // namespace braid::detail
