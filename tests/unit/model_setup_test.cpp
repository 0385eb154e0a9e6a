// Every rank chooses with the same figures: the lowest rank's profile among those that have
// one, the built-in typical figures when none has; ranks that disagree on BRAID_SELECTION are
// named. Ranks are threads over a real TCP bootstrap on 127.0.0.1.
#include "api/model_setup.hpp"

#include <gtest/gtest.h>

#include <string>

#include "bootstrap_harness.hpp"

namespace braid::detail {
namespace {

using testing::config;
using testing::free_port;
using testing::run_threads;

MachineProfile profile(double rtt_ns, const char *host) {
  MachineProfile p;
  p.handoff_rtt_ns = rtt_ns;
  p.memcpy_gbps = 40;
  p.memcpy_large_gbps = 10;
  p.window_copy_gbps = 8;
  p.reduce_gbps = 12;
  p.cma_gbps = 10;
  p.host = host;
  p.measured_at = "2026-11-26T12:00:00Z";
  return p;
}

TEST(ModelSetup, EveryRankTakesTheLowestRankWithAProfile) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port));
    ModelRequest request;
    if (rank == 1) request.profile = profile(335, "node-b");
    if (rank == 2) request.profile = profile(67, "node-c");
    coll::SelectionTable t = coll::SelectionTable::defaults();
    agree_on_model(*b, request, t, 0, 0);
    if (t.model() == nullptr) return std::string("no model");
    const coll::CostInputs &in = t.model()->inputs();
    if (in.node.handoff_rtt_ns != 335 || in.node.host != "node-b")
      return cat("rank ", rank, " took ", in.node.host, " (", in.node.handoff_rtt_ns, " ns)");
    if (in.source.find("rank 1 (node-b, measured 2026-11-26T12:00:00Z)") == std::string::npos)
      return cat("source: ", in.source);
    return std::string();
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(outcomes[r].ok) << r << ": " << outcomes[r].message;
    EXPECT_EQ(outcomes[r].data, "") << r;
  }
}

TEST(ModelSetup, WithoutProfilesTheTypicalFiguresAndRankZerosTransportHints) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(2, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 2, port));
    coll::SelectionTable t = coll::SelectionTable::defaults();
    // Rank 1's transport reports other figures (another NIC): rank 0's serve everyone.
    agree_on_model(*b, ModelRequest{}, t, rank == 0 ? 1.5 : 9.0, rank == 0 ? 25 : 2);
    if (t.model() == nullptr) return std::string("no model");
    const coll::CostInputs &in = t.model()->inputs();
    if (in.source != coll::CostInputs::typical().source) return cat("source: ", in.source);
    if (in.network.latency_us != 1.5 || in.network.gbps != 25)
      return cat("network ", in.network.latency_us, " us ", in.network.gbps, " GB/s");
    return std::string();
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(outcomes[r].data, "") << r << outcomes[r].message;
}

TEST(ModelSetup, RanksThatDisagreeOnTheModeAreNamed) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(2, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 2, port));
    ModelRequest request;
    request.use_model = rank == 0;
    coll::SelectionTable t = coll::SelectionTable::defaults();
    agree_on_model(*b, request, t, 0, 0);
    return std::string("agreed");
  });
  EXPECT_FALSE(outcomes[0].ok);
  EXPECT_EQ(outcomes[0].code, BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(outcomes[0].message.find("BRAID_SELECTION differs between ranks: rank 1 chooses by "
                                     "the rules, rank 0 by the model"),
            std::string::npos)
      << outcomes[0].message;
  EXPECT_FALSE(outcomes[1].ok);
}

// A per-host wrapper that forces an algorithm on some ranks only: their messages would never
// match (a hang until BRAID_TIMEOUT where no control plane explains it). Named at init.
TEST(ModelSetup, RanksThatForceDifferentAlgorithmsAreNamed) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(3, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 3, port));
    coll::SelectionTable t = coll::SelectionTable::defaults();
    t.set_override(coll::CollKind::broadcast, "binomial");  // the same everywhere: fine
    if (rank == 2) t.set_override(coll::CollKind::allreduce, "ring");
    agree_on_model(*b, ModelRequest{}, t, 0, 0);
    return std::string("agreed");
  });
  // Worded alike on every rank.
  for (int r = 0; r < 3; ++r) {
    EXPECT_FALSE(outcomes[r].ok) << r;
    EXPECT_EQ(outcomes[r].code, BRAID_ERR_INVALID_ARGUMENT) << r;
    EXPECT_NE(outcomes[r].message.find("BRAID_ALLREDUCE_ALGO differs between ranks: rank 0 "
                                       "forces none, rank 2 'ring'"),
              std::string::npos)
        << r << ": " << outcomes[r].message;
  }
}

TEST(ModelSetup, TheSameForcedAlgorithmsAgree) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(2, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 2, port));
    coll::SelectionTable t = coll::SelectionTable::defaults();
    t.set_override(coll::CollKind::allgather, "bruck");
    agree_on_model(*b, ModelRequest{}, t, 0, 0);
    const coll::Algorithm *a = t.override_of(coll::CollKind::allgather);
    return std::string(a != nullptr && std::string(a->name) == "bruck" ? "" : "override lost");
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(outcomes[r].data, "") << r << outcomes[r].message;
}

TEST(ModelSetup, RulesLeaveTheTableWithoutAModel) {
  const uint16_t port = free_port();
  auto outcomes = run_threads(2, [&](int rank) {
    auto b = make_tcp_bootstrap(config(rank, 2, port));
    ModelRequest request;
    request.use_model = false;
    request.profile = profile(100, "x");
    coll::SelectionTable t = coll::SelectionTable::defaults();
    agree_on_model(*b, request, t, 0, 0);
    return std::string(t.model() == nullptr ? "" : "a model was set");
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(outcomes[r].data, "") << r << outcomes[r].message;
}

}  // namespace
}  // namespace braid::detail
