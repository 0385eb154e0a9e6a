// How the bootstrap fails: every failure is a Failure with the right code and a message naming
// the rank (or address) at fault, within the timeout, on every rank that can know.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>

#include "bootstrap/socket.hpp"
#include "bootstrap_harness.hpp"

namespace braid::detail {
namespace {

using namespace braid::detail::testing;
using Clock = std::chrono::steady_clock;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(BootstrapFailure, RankZeroUnreachableFailsWithinTheTimeout) {
  const uint16_t port = free_port();
  auto start = Clock::now();
  try {
    make_tcp_bootstrap(config(3, 4, port, "k", 0.5));
    FAIL() << "formed a job without rank 0";
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
    EXPECT_EQ(f.message(), cat("rank 3: could not reach rank 0 at 127.0.0.1:", port,
                               " after 0.5 s: Connection refused"));
  }
  double took = seconds_since(start);
  EXPECT_GT(took, 0.45);
  EXPECT_LT(took, 3.0);  // the timeout ended it, with room for a loaded machine (TSan in CI)
}

TEST(BootstrapFailure, RankZeroCannotListen) {
  const uint16_t port = free_port();
  std::string error;
  bs::Fd squatter = bs::listen_on("127.0.0.1", port, &error);
  ASSERT_TRUE(squatter.valid()) << error;
  try {
    make_tcp_bootstrap(config(0, 2, port, "k", 0.5));
    FAIL();
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP);
    EXPECT_TRUE(contains(f.message(), cat("rank 0: could not listen on 127.0.0.1:", port)))
        << f.message();
    EXPECT_TRUE(contains(f.message(), "Address already in use")) << f.message();
  }
}

TEST(BootstrapFailure, FormationTimeoutNamesTheRanksThatNeverConnected) {
  const uint16_t port = free_port();
  auto start = Clock::now();
  // Ranks 2 and 3 of 4 never start.
  auto outcomes = run_threads(2, [&](int rank) {
    make_tcp_bootstrap(config(rank, 4, port, "k", 0.5));
    return std::string();
  });
  EXPECT_LT(seconds_since(start), 3.0);
  const std::string reason =
      cat("timed out after 0.5 s waiting for ranks 2, 3 to connect to 127.0.0.1:", port);
  EXPECT_EQ(outcomes[0].code, BRAID_ERR_BOOTSTRAP);
  EXPECT_EQ(outcomes[0].message, "rank 0: " + reason);
  // Rank 1 hears rank 0's reason rather than timing out on its own.
  EXPECT_EQ(outcomes[1].code, BRAID_ERR_BOOTSTRAP);
  EXPECT_EQ(outcomes[1].message, "rank 1: rank 0 could not form the job: " + reason);
}

TEST(BootstrapFailure, RankZeroDyingWhileTheJobFormsIsReportedPromptly) {
  const uint16_t port = free_port();
  auto start = Clock::now();
  // Rank 2 of 3 never starts; rank 0 is killed while it waits, after rank 1 has joined.
  auto outcomes = run_forked(2, [&](int rank) {
    if (rank == 0)
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        raise(SIGKILL);
      }).detach();
    make_tcp_bootstrap(config(rank, 3, port, "k", 10.0));
    return std::string("formed");
  });
  EXPECT_LT(seconds_since(start), 5.0);  // through EOF, not rank 1's own timeout (10 s)
  EXPECT_FALSE(outcomes[0].ran);
  ASSERT_TRUE(outcomes[1].ran);
  EXPECT_EQ(outcomes[1].code, BRAID_ERR_BOOTSTRAP);
  EXPECT_EQ(outcomes[1].message,
            "rank 1: forming the job: lost connection to rank 0: connection closed by peer");
}

// Ranks as processes; `victim` is killed with SIGKILL right after the job forms, and the
// others then run an allgather.
std::vector<Outcome> kill_after_forming(int size, int victim) {
  const uint16_t port = free_port();
  return run_forked(size, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, size, port, "k", 10.0));
    if (rank == victim) raise(SIGKILL);
    int in = rank;
    std::vector<int> out(size);
    b->allgather(&in, out.data(), sizeof in);
    return std::string("allgather succeeded without rank ") + std::to_string(victim);
  });
}

TEST(BootstrapFailure, RankThatDiesAfterFormingIsNamedByEveryone) {
  auto start = Clock::now();
  auto outcomes = kill_after_forming(4, 2);
  EXPECT_LT(seconds_since(start), 5.0);  // noticed through EOF, not a timeout (10 s)
  EXPECT_FALSE(outcomes[2].ran);
  for (int r : {0, 1, 3}) {
    ASSERT_TRUE(outcomes[r].ran) << "rank " << r;
    EXPECT_EQ(outcomes[r].code, BRAID_ERR_PEER_FAILED)
        << "rank " << r << ": " << outcomes[r].message;
    EXPECT_TRUE(contains(outcomes[r].message, "bootstrap allgather: lost connection to rank 2"))
        << "rank " << r << ": " << outcomes[r].message;
  }
}

TEST(BootstrapFailure, RankZeroDyingIsNamedByEveryone) {
  auto start = Clock::now();
  auto outcomes = kill_after_forming(3, 0);
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_FALSE(outcomes[0].ran);
  for (int r : {1, 2}) {
    ASSERT_TRUE(outcomes[r].ran) << "rank " << r << " died (SIGPIPE?)";
    EXPECT_EQ(outcomes[r].code, BRAID_ERR_PEER_FAILED) << outcomes[r].message;
    EXPECT_TRUE(contains(outcomes[r].message, "bootstrap allgather: lost connection to rank 0"))
        << outcomes[r].message;
  }
}

TEST(BootstrapFailure, RankThatNeverCallsAllgatherIsNamedInTheTimeout) {
  const uint16_t port = free_port();
  auto start = Clock::now();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port, "k", 0.5));
    int in = rank, out[3];
    // Rank 2 turns up only after everyone else has given up on it.
    if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    std::string first;
    try {
      b->allgather(&in, out, sizeof in);
      return std::string("allgather succeeded");
    } catch (const Failure &f) {
      first = cat(f.code(), ": ", f.message());
    }
    try {
      b->barrier();
      return first + " | then a barrier succeeded";
    } catch (const Failure &f) {
      return cat(first, " | ", f.code(), ": ", f.message());
    }
  });
  EXPECT_LT(seconds_since(start), 6.0);
  const std::string expected =
      cat(BRAID_ERR_TIMEOUT, ": bootstrap allgather: timed out after 0.5 s waiting for rank 2");
  const std::string later =
      cat(" | ", BRAID_ERR_TIMEOUT,
          ": bootstrap barrier: the bootstrap is unusable after an earlier failure: "
          "bootstrap allgather: timed out after 0.5 s waiting for rank 2");
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(outcomes[r].ok) << outcomes[r].message;
    // Rank 2 itself finds rank 0's report waiting when it finally calls.
    EXPECT_EQ(outcomes[r].data, expected + later) << "rank " << r;
  }
}

TEST(BootstrapFailure, RankZeroNeverCallingIsNamedAfterTheGrace) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port, "k", 0.4));
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      return std::string();
    }
    int in = rank, out[3];
    auto start = Clock::now();
    b->allgather(&in, out, sizeof in);
    return cat("allgather succeeded after ", seconds_since(start), " s");
  });
  for (int r : {1, 2}) {
    EXPECT_EQ(outcomes[r].code, BRAID_ERR_TIMEOUT) << outcomes[r].message << outcomes[r].data;
    EXPECT_EQ(outcomes[r].message, "bootstrap allgather: timed out after 0.4 s waiting for rank 0");
  }
}

TEST(BootstrapFailure, DestroyedRankZeroIsAPeerFailureNotAHang) {
  // Threads: rank 0 forms and returns (destroying its bootstrap); the others then call.
  const uint16_t port = free_port();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port, "k", 1.0));
    if (rank == 0) return std::string();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    b->barrier();
    return std::string("barrier succeeded");
  });
  EXPECT_TRUE(outcomes[0].ok);
  for (int r : {1, 2}) {
    EXPECT_EQ(outcomes[r].code, BRAID_ERR_PEER_FAILED) << outcomes[r].message;
    EXPECT_TRUE(contains(outcomes[r].message, "bootstrap barrier: lost connection to rank 0"))
        << outcomes[r].message;
  }
}

}  // namespace
}  // namespace braid::detail
