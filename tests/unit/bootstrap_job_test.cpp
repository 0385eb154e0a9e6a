// Forming jobs over real sockets on 127.0.0.1 and running the bootstrap collectives, with
// ranks as threads and as forked processes.
#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap/socket.hpp"
#include "bootstrap_harness.hpp"

namespace braid::detail {
namespace {

using namespace braid::detail::testing;

uint8_t pattern(int rank, size_t i, size_t bytes) {
  return static_cast<uint8_t>(rank * 31 + i * 7 + bytes);
}

// One allgather of `bytes` per rank; returns "" if every rank's block arrived intact.
std::string check_allgather(Bootstrap &b, size_t bytes) {
  std::vector<uint8_t> in(bytes), out(bytes * b.size() + 1, 0xEE);
  for (size_t i = 0; i < bytes; ++i) in[i] = pattern(b.rank(), i, bytes);
  b.allgather(in.data(), out.data(), bytes);
  for (int r = 0; r < b.size(); ++r)
    for (size_t i = 0; i < bytes; ++i)
      if (out[r * bytes + i] != pattern(r, i, bytes))
        return cat("allgather of ", bytes, ": rank ", r, " byte ", i, " wrong");
  if (out.back() != 0xEE) return cat("allgather of ", bytes, " wrote past the end");
  return "";
}

std::string standard_workload(Bootstrap &b) {
  std::string report;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20})
    report += check_allgather(b, bytes);
  b.barrier();
  b.allgather(nullptr, nullptr, 0);
  b.barrier();
  report += check_allgather(b, 3);
  return report;
}

void expect_all_ok(const std::vector<Outcome> &outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_TRUE(outcomes[r].ran) << "rank " << r << " died";
    EXPECT_TRUE(outcomes[r].ok) << "rank " << r << ": " << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data, "") << "rank " << r;
  }
}

TEST(BootstrapJob, SingleRankNeedsNoNetwork) {
  // No host, no port: nothing may be opened.
  auto b = make_tcp_bootstrap(BootstrapConfig{0, 1, "", 0, "", 1.0});
  EXPECT_EQ(b->rank(), 0);
  EXPECT_EQ(b->size(), 1);
  EXPECT_EQ(b->host_of(0), bs::local_hostname());
  EXPECT_EQ(standard_workload(*b), "");
}

class BootstrapJobSizes : public ::testing::TestWithParam<int> {};

TEST_P(BootstrapJobSizes, ThreadsFormAJobAndRunCollectives) {
  const int size = GetParam();
  const uint16_t port = free_port();
  expect_all_ok(run_threads(size, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, size, port));
    if (b->rank() != rank || b->size() != size) return std::string("wrong rank/size");
    for (int r = 0; r < size; ++r)
      if (b->host_of(r) != bs::local_hostname()) return cat("host_of(", r, ") = ", b->host_of(r));
    return standard_workload(*b);
  }));
}

TEST_P(BootstrapJobSizes, ProcessesFormAJobAndRunCollectives) {
  const int size = GetParam();
  const uint16_t port = free_port();
  expect_all_ok(run_forked(size, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, size, port));
    return standard_workload(*b);
  }));
}

INSTANTIATE_TEST_SUITE_P(Sizes, BootstrapJobSizes, ::testing::Values(2, 4, 8));

TEST(BootstrapJob, RanksMayStartBeforeRankZero) {
  const uint16_t port = free_port();
  // Rank 0 starts 300 ms late: the others must retry rather than fail.
  expect_all_ok(run_threads(4,
                            [&](int rank) {
                              auto b = make_tcp_bootstrap(config(rank, 4, port));
                              return check_allgather(*b, 16);
                            },
                            {0.3, 0, 0, 0}));
}

TEST(BootstrapJob, EmptyJobKeyMeansNoKey) {
  const uint16_t port = free_port();
  expect_all_ok(run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port, ""));
    return check_allgather(*b, 8);
  }));
}

TEST(BootstrapJob, ListensOnAHostName) {
  const uint16_t port = free_port();
  expect_all_ok(run_threads(2, [&](int rank) {
    BootstrapConfig cfg = config(rank, 2, port);
    cfg.host = "localhost";
    auto b = make_tcp_bootstrap(cfg);
    return check_allgather(*b, 8);
  }));
}

TEST(BootstrapJob, ListensOnIpv6) {
  std::string error;
  if (!bs::listen_on("::1", free_port(), &error).valid()) GTEST_SKIP() << "no IPv6: " << error;
  const uint16_t port = free_port();
  expect_all_ok(run_threads(3, [&](int rank) {
    BootstrapConfig cfg = config(rank, 3, port);
    cfg.host = "::1";
    auto b = make_tcp_bootstrap(cfg);
    return check_allgather(*b, 8);
  }));
}

TEST(BootstrapJob, AllgatherInPlace) {
  const uint16_t port = free_port();
  expect_all_ok(run_threads(4, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 4, port));
    const size_t bytes = 1000;
    std::vector<uint8_t> buf(4 * bytes);
    for (size_t i = 0; i < bytes; ++i) buf[rank * bytes + i] = pattern(rank, i, bytes);
    b->allgather(buf.data() + rank * bytes, buf.data(), bytes);
    for (int r = 0; r < 4; ++r)
      for (size_t i = 0; i < bytes; ++i)
        if (buf[r * bytes + i] != pattern(r, i, bytes)) return cat("rank ", r, " byte ", i);
    return std::string();
  }));
}

TEST(BootstrapJob, ManyCollectivesInARow) {
  const uint16_t port = free_port();
  expect_all_ok(run_threads(4, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 4, port));
    std::string report;
    for (int i = 0; i < 200 && report.empty(); ++i) {
      if (i % 3 == 0) b->barrier();
      report = check_allgather(*b, static_cast<size_t>(i % 5));
    }
    return report;
  }));
}

TEST(BootstrapJob, SizeMismatchFailsOnEveryRankAndTheJobCarriesOn) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port));
    std::vector<uint8_t> in(16), out(48);
    std::string report;
    try {
      b->allgather(in.data(), out.data(), rank == 1 ? 16 : 8);
      report = "no mismatch reported";
    } catch (const Failure &f) {
      if (f.code() != BRAID_ERR_MISMATCH) return cat("code ", f.code(), ": ", f.message());
      report = f.message() + "|";
    }
    return report + check_allgather(*b, 8);  // still usable
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(outcomes[r].ok) << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data,
              "bootstrap allgather: rank 1 passed 16 bytes but rank 0 passed 8 bytes|")
        << "rank " << r;
  }
}

TEST(BootstrapJob, BarrierAgainstAllgatherIsAMismatch) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port));
    uint8_t in = 1, out[3];
    try {
      if (rank == 2)
        b->barrier();
      else
        b->allgather(&in, out, 1);
      return std::string("no mismatch reported");
    } catch (const Failure &f) {
      if (f.code() != BRAID_ERR_MISMATCH) throw;
      return f.message() + "|" + check_allgather(*b, 1);
    }
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(outcomes[r].ok) << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data, "bootstrap: rank 2 called barrier but rank 0 called allgather|");
  }
}

TEST(BootstrapJob, InvalidArgumentsAreRefusedLocally) {
  auto b = make_tcp_bootstrap(BootstrapConfig{0, 1, "", 0, "", 1.0});
  uint8_t out[8];
  try {
    b->allgather(nullptr, out, 8);
    FAIL();
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  }
  try {
    b->host_of(1);
    FAIL();
  } catch (const Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
  }
  b->barrier();  // an argument error does not break the bootstrap
}

TEST(BootstrapJob, InvalidConfigsAreBootstrapFailures) {
  std::vector<BootstrapConfig> bad{
      {0, 0, "127.0.0.1", 1, "", 1.0},                        // size
      {2, 2, "127.0.0.1", 1, "", 1.0},                        // rank
      {-1, 2, "127.0.0.1", 1, "", 1.0},                       // rank
      {0, 2, "127.0.0.1", 1, "", 0.0},                        // timeout
      {0, 2, "127.0.0.1", 1, "", -1.0},                       // timeout
      {1, 2, "127.0.0.1", 0, "", 1.0},                        // port
      {1, 2, "", 4242, "", 1.0},                              // host
      {1, 2, "127.0.0.1", 4242, std::string(257, 'k'), 1.0},  // key
  };
  for (const BootstrapConfig &cfg : bad) {
    try {
      make_tcp_bootstrap(cfg);
      ADD_FAILURE() << "accepted rank " << cfg.rank << " size " << cfg.size;
    } catch (const Failure &f) {
      EXPECT_EQ(f.code(), BRAID_ERR_BOOTSTRAP) << f.message();
    }
  }
}

}  // namespace
}  // namespace braid::detail
