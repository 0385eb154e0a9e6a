// Forming a job when rank 0 chose its port at run time (BootstrapListener) and published several
// addresses: the other ranks use the first address that answers, and name them all when none
// does.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

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

// Forms a 3-rank job whose ranks 1 and 2 are given `first` before rank 0's real address;
// returns each rank's outcome.
std::vector<Outcome> form_behind(uint16_t first) {
  auto listener = std::make_shared<BootstrapListener>(BootstrapListener::on_any_interface(false));
  const uint16_t port = listener->port();
  return run_threads(3, [&](int rank) {
    BootstrapConfig cfg = config(rank, 3, first, "job-key", 10.0);
    cfg.more_addresses = {{"127.0.0.1", port}};
    std::unique_ptr<Bootstrap> b;
    if (rank == 0) {
      cfg.port = port;
      b = make_tcp_bootstrap(cfg, std::move(*listener));
    } else {
      b = make_tcp_bootstrap(cfg);
    }
    int mine = 10 + rank, all[3] = {};
    b->allgather(&mine, all, sizeof mine);
    return all[0] == 10 && all[1] == 11 && all[2] == 12 ? std::string() : std::string("bad data");
  });
}

TEST(BootstrapAddresses, RanksSkipAnAddressThatDoesNotAnswer) {
  const auto outcomes = form_behind(free_port());  // nothing listens there
  for (int r = 0; r < 3; ++r) {
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

TEST(BootstrapAddresses, RanksSkipAnAddressWhereAnotherJobsRankZeroListens) {
  // The other job's rank 0 waits for a rank 1 that never comes; it refuses our ranks' key.
  auto other = std::make_shared<BootstrapListener>(BootstrapListener::on_any_interface(false));
  const uint16_t other_port = other->port();
  std::thread other_job([&] {
    try {
      make_tcp_bootstrap(config(0, 2, other_port, "other-job", 3.0), std::move(*other));
    } catch (const Failure &) {  // its rank 1 never came: expected
    }
  });
  const auto outcomes = form_behind(other_port);
  other_job.join();
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(outcomes[r].ok) << "rank " << r << ": " << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data, "") << "rank " << r;
  }
}

TEST(BootstrapAddresses, RanksSkipAnAddressThatAcceptsAndNeverAnswers) {
  // A listener nobody accepts on: the kernel completes the connection, nothing answers.
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(silent, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr *>(&addr), &len), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes = form_behind(ntohs(addr.sin_port));
  const double took = seconds_since(start);
  close(silent);
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(outcomes[r].ok) << "rank " << r << ": " << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data, "") << "rank " << r;
  }
  EXPECT_LT(took, 8.0) << "the silent address held the ranks for most of their timeout (10 s)";
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
