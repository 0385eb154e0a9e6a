// The cost model on recorded machine profiles: every algorithm has a prediction, predictions
// grow with the size, and a fast core-to-core link and a slow one choose differently where
// they should (the node path's copy protocol, the flat algorithms' switch points); the
// selection table under the model; the copy chooser seeded by it.
#include "selection/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

#include "intranode/single_copy.hpp"
#include "selection/selection.hpp"

namespace braid::coll {
namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;

// braid-tune on the 2-core EPYC VM, 2026-11-26, in a fast spell and in a slow one
// (tests/profiles; the same machine minutes apart).
detail::MachineProfile recorded(const char *name) {
  const std::string path = std::string(BRAID_TEST_PROFILE_DIR) + "/" + name;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  auto p = detail::profile_from_json(text.str(), &why);
  if (!p) ADD_FAILURE() << path << ": " << why;
  return p.value_or(detail::MachineProfile{});
}

detail::MachineProfile fast_link() {
  return recorded("fast-link.json");
}

detail::MachineProfile slow_link() {
  return recorded("slow-link.json");
}

Topology one_node(int ranks) {
  return {ranks, 1, ranks, true};
}

Topology node_path_off(int ranks) {
  return {ranks, 1, ranks, false};
}

Topology two_nodes(int ranks) {
  return {ranks, 2, (ranks + 1) / 2, true};
}

// A topology every algorithm of `a`'s kind can be asked about.
Topology where_it_runs(const Algorithm &a) {
  if (a.needs == Span::one_node) return one_node(4);
  if (a.needs == Span::nodes) return two_nodes(4);
  return Topology::flat(4);
}

TEST(CostModel, EveryAlgorithmHasAFinitePositivePrediction) {
  for (const auto &profile : {fast_link(), slow_link()}) {
    const CostModel model(CostInputs::from_profile(profile, profile.measured_at));
    for (const Algorithm &a : all_algorithms())
      for (size_t bytes = 8; bytes <= 64 * MiB; bytes *= 4) {
        bool found = false;
        for (const Prediction &p : model.predict(a.kind, bytes, where_it_runs(a))) {
          if (p.algorithm != &a) continue;
          found = true;
          EXPECT_TRUE(std::isfinite(p.us) && p.us > 0)
              << kind_name(a.kind) << " " << a.name << " " << bytes << " B: " << p.us;
        }
        EXPECT_TRUE(found) << kind_name(a.kind) << " " << a.name << " has no prediction";
      }
  }
}

// braid-tune writes cma_gbps 0 where the kernel refuses CMA: a rendezvous between ranks of
// one node then goes through the transport's shared memory, at the window rate, not at
// a floor of 0.01 GB/s that made every flat prediction from 8 KiB up about 1000x too high.
TEST(CostModel, AProfileWithoutCmaKeepsTheWindowRate) {
  detail::MachineProfile p = fast_link();
  const LinkCost with = local_link(p);
  p.cma_gbps = 0;
  const LinkCost without = local_link(p);
  EXPECT_EQ(without.gbps, p.window_copy_gbps);
  EXPECT_GE(without.gbps, with.gbps);
  CostModel model(CostInputs::from_profile(p, "no CMA"));
  for (const Algorithm &a : all_algorithms()) {
    if (a.kind != CollKind::allreduce || a.needs != Span::any) continue;
    const Prediction at = model.predict_one(a, 4 * MiB, node_path_off(2));
    EXPECT_TRUE(std::isfinite(at.us)) << a.name;
    // 4 MiB at the window rate (GB/s = 1e3 bytes/us) within a few copies, not 1000x that.
    EXPECT_LT(at.us, 8 * (4.0 * MiB) / (p.window_copy_gbps * 1e3)) << a.name;
  }
}

TEST(CostModel, PredictionsGrowWithTheSize) {
  const CostModel model(CostInputs::from_profile(fast_link(), "fast"));
  for (const Algorithm &a : all_algorithms()) {
    double before = 0;
    for (size_t bytes = 8; bytes <= 64 * MiB; bytes *= 2)
      for (const Prediction &p : model.predict(a.kind, bytes, where_it_runs(a)))
        if (p.algorithm == &a) {
          // The node path switches protocol at fixed sizes (the slots below 16 KiB, the
          // windows above), where a few percent either way is the model's resolution.
          const double slack = a.needs == Span::one_node ? 0.95 : 0.999;
          EXPECT_GE(p.us, before * slack)
              << kind_name(a.kind) << " " << a.name << " at " << bytes << " B (" << p.path << ")";
          before = p.us;
        }
  }
}

TEST(CostModel, OnlyAlgorithmsTheLayoutAllowsAreCandidates) {
  const CostModel model(CostInputs::typical());
  for (const Prediction &p : model.predict(CollKind::allreduce, 1 * MiB, node_path_off(4)))
    EXPECT_EQ(p.algorithm->needs, Span::any) << p.algorithm->name;
  bool shm = false;
  for (const Prediction &p : model.predict(CollKind::allreduce, 1 * MiB, one_node(4))) {
    EXPECT_NE(p.algorithm->needs, Span::nodes) << p.algorithm->name;
    shm = shm || p.algorithm->needs == Span::one_node;
  }
  EXPECT_TRUE(shm);
}

// The node path's copy protocol: with a fast link a reader copies out of the windows faster
// than a process_vm_readv call; in a slow spell the windows pull every line across the link
// at a few GB/s and the single copy wins from a few KiB.
TEST(CostModel, FastAndSlowLinksChooseDifferentNodeCopyPaths) {
  SelectionTable fast = SelectionTable::defaults();
  fast.set_model(CostInputs::from_profile(fast_link(), "fast"));
  SelectionTable slow = SelectionTable::defaults();
  slow.set_model(CostInputs::from_profile(slow_link(), "slow"));
  for (size_t bytes : {64 * KiB, 1 * MiB, 4 * MiB}) {
    const Choice f = fast.choose(CollKind::broadcast, bytes, bytes / 4, one_node(2));
    const Choice s = slow.choose(CollKind::broadcast, bytes, bytes / 4, one_node(2));
    EXPECT_STREQ(f.algorithm->name, "shm");
    EXPECT_STREQ(s.algorithm->name, "shm");
    EXPECT_STREQ(f.path, "windows") << bytes;
    EXPECT_STREQ(s.path, "single-copy") << bytes;
    EXPECT_FALSE(fast.model()->single_copy_wins(bytes)) << bytes;
    EXPECT_TRUE(slow.model()->single_copy_wins(bytes)) << bytes;
  }
  // Alltoallv reads its peers' blocks by single copy as alltoall does (each rank's record says
  // where its block for every local rank starts): the model predicts the same path and cost
  // for blocks of one size. Alltoall's bytes are one block, alltoallv's the send span.
  for (size_t block : {64 * KiB, 4 * MiB}) {
    for (const SelectionTable *t : {&fast, &slow}) {
      const Choice a = t->choose(CollKind::alltoall, block, block / 4, one_node(2));
      const Choice v = t->choose(CollKind::alltoallv, 2 * block, block / 2, one_node(2));
      EXPECT_STREQ(v.path, a.path) << block;
      EXPECT_NEAR(v.predicted_us, a.predicted_us, 1e-9 + a.predicted_us * 1e-9) << block;
    }
  }
  EXPECT_STREQ(slow.choose(CollKind::alltoallv, 8 * MiB, 2 * MiB, one_node(2)).path, "single-copy");
  // Below the single-copy threshold both keep the call records.
  EXPECT_STREQ(slow.choose(CollKind::broadcast, 64, 16, one_node(2)).path, "records");
  EXPECT_FALSE(slow.model()->single_copy_wins(1 * KiB));
}

// The smallest power-of-two size from which `kind` leaves `first` on `where`.
size_t switch_point(const SelectionTable &t, CollKind kind, const Topology &where,
                    const char *first) {
  for (size_t bytes = 8; bytes <= 64 * MiB; bytes *= 2)
    if (std::string(t.choose(kind, bytes, bytes / 4, where).algorithm->name) != first) return bytes;
  return 0;
}

// The flat algorithms over the node's own transport. The model's own logic first: a dearer
// message keeps the latency-bound algorithm to larger sizes, a dearer byte hands over to the
// bandwidth-bound one sooner.
TEST(CostModel, LatencyAndBandwidthMoveTheFlatSwitchPointsOppositeWays) {
  const detail::MachineProfile base = fast_link();
  detail::MachineProfile slow_handoff = base;
  slow_handoff.handoff_rtt_ns = base.handoff_rtt_ns * 20;  // software dominates a message
  detail::MachineProfile slow_bytes = base;
  slow_bytes.window_copy_gbps = base.window_copy_gbps / 5;
  slow_bytes.cma_gbps = base.cma_gbps / 5;
  auto table = [](const detail::MachineProfile &p) {
    SelectionTable t = SelectionTable::defaults();
    t.set_model(CostInputs::from_profile(p, "p"));
    return t;
  };
  const struct {
    CollKind kind;
    const char *latency_bound;
  } cases[] = {{CollKind::allreduce, "recursive_doubling"},
               {CollKind::broadcast, "binomial"},
               {CollKind::reduce, "binomial"}};
  int moved_later = 0, moved_sooner = 0;
  for (const auto &c : cases) {
    const size_t at = switch_point(table(base), c.kind, node_path_off(4), c.latency_bound);
    const size_t later =
        switch_point(table(slow_handoff), c.kind, node_path_off(4), c.latency_bound);
    const size_t sooner =
        switch_point(table(slow_bytes), c.kind, node_path_off(4), c.latency_bound);
    EXPECT_GT(at, 0u) << kind_name(c.kind);
    EXPECT_GE(later, at) << kind_name(c.kind);
    EXPECT_LE(sooner, at) << kind_name(c.kind);
    moved_later += later > at;
    moved_sooner += sooner < at;
  }
  EXPECT_GT(moved_later, 0);
  EXPECT_GT(moved_sooner, 0);
}

// The two recorded profiles: the switch points they give differ, and the ring takes the
// largest vectors on both.
TEST(CostModel, FastAndSlowLinksMoveTheFlatSwitchPoints) {
  SelectionTable fast = SelectionTable::defaults();
  fast.set_model(CostInputs::from_profile(fast_link(), "fast"));
  SelectionTable slow = SelectionTable::defaults();
  slow.set_model(CostInputs::from_profile(slow_link(), "slow"));
  const size_t f = switch_point(fast, CollKind::allreduce, node_path_off(4), "recursive_doubling");
  const size_t s = switch_point(slow, CollKind::allreduce, node_path_off(4), "recursive_doubling");
  EXPECT_NE(f, s) << "recursive doubling gives way at " << f << " B on both links";
  for (SelectionTable *t : {&fast, &slow}) {
    EXPECT_STREQ(
        t->choose(CollKind::allreduce, 64 * MiB, 16 * MiB, node_path_off(2)).algorithm->name,
        "ring");
    EXPECT_STREQ(t->choose(CollKind::allreduce, 8, 2, node_path_off(2)).algorithm->name,
                 "recursive_doubling");
  }
}

TEST(CostModel, TheModelsChoiceIsTheCheapestPrediction) {
  SelectionTable t = SelectionTable::defaults();
  t.set_model(CostInputs::from_profile(slow_link(), "slow"));
  for (CollKind kind :
       {CollKind::allreduce, CollKind::broadcast, CollKind::reduce, CollKind::allgather,
        CollKind::reduce_scatter, CollKind::alltoall, CollKind::gather, CollKind::scatter})
    for (size_t bytes = 64; bytes <= 16 * MiB; bytes *= 8) {
      const Topology where = Topology::flat(4);
      const Choice c = t.choose(kind, bytes, bytes, where);
      for (const Prediction &p : t.model()->predict(kind, bytes, where))
        EXPECT_LE(c.predicted_us, p.us)
            << kind_name(kind) << " " << bytes << " B: " << c.algorithm->name << " over "
            << p.algorithm->name;
      EXPECT_EQ(describe(c).rfind("cost model", 0), 0u) << describe(c);
    }
}

TEST(CostModel, NodeAwareAlgorithmsServeNodeLayouts) {
  SelectionTable t = SelectionTable::defaults();
  t.set_model(CostInputs::typical());
  for (size_t bytes = 8; bytes <= 64 * MiB; bytes *= 8) {
    const Choice node = t.choose(CollKind::allreduce, bytes, bytes / 4, one_node(4));
    EXPECT_STREQ(node.algorithm->name, "shm");
    // Chosen for the layout, not as the cheapest prediction: --explain says which.
    EXPECT_EQ(describe(node).rfind("node layout, cost model, ", 0), 0u) << describe(node);
    EXPECT_STREQ(t.choose(CollKind::broadcast, bytes, bytes / 4, two_nodes(4)).algorithm->name,
                 "hierarchical");
    // The leaders' algorithm is the model's too.
    EXPECT_EQ(t.choose_among_leaders(CollKind::allreduce, bytes, bytes / 4, two_nodes(4)).reason,
              std::string("cost model"));
  }
}

TEST(CostModel, OverridesAndTheFewElementsCaseStillWin) {
  SelectionTable t = SelectionTable::defaults();
  t.set_model(CostInputs::typical());
  t.set_override(CollKind::broadcast, "scatter_allgather");
  EXPECT_STREQ(t.choose(CollKind::broadcast, 8, 2, Topology::flat(4)).algorithm->name,
               "scatter_allgather");
  const Choice few = t.choose(CollKind::allreduce, 8 * MiB, 3, Topology::flat(4));
  EXPECT_STREQ(few.algorithm->name, "recursive_doubling");
  EXPECT_STREQ(few.reason, "fewer elements than ranks");
}

TEST(CostModel, ExplainShowsEachCandidatesPrediction) {
  SelectionTable t = SelectionTable::defaults();
  t.set_model(CostInputs::from_profile(slow_link(), "the slow profile"));
  const std::string text = t.explain(one_node(2));
  EXPECT_NE(text.find("the cost model, from the slow profile"), std::string::npos) << text;
  EXPECT_NE(text.find("predicted broadcast: binomial"), std::string::npos) << text;
  EXPECT_NE(text.find("shm[single-copy]"), std::string::npos) << text;
}

TEST(CostModel, TheNetworkLinkBoundsFlatAlgorithmsAcrossNodes) {
  CostInputs slow_net = CostInputs::typical();
  slow_net.network = {50, 1, 1, 0, 0};
  const CostModel fast(CostInputs::typical());
  const CostModel slow(slow_net);
  const Topology flat_nodes{4, 4, 1, true};
  ASSERT_FALSE(slow.predict(CollKind::allreduce, 64 * KiB, flat_nodes).empty());
  for (const Prediction &p : slow.predict(CollKind::allreduce, 64 * KiB, flat_nodes))
    for (const Prediction &q : fast.predict(CollKind::allreduce, 64 * KiB, flat_nodes)) {
      if (p.algorithm == q.algorithm) {
        EXPECT_GT(p.us, q.us) << p.algorithm->name;
      }
    }
}

// The copy chooser's first call of a class goes single copy (cold either way, not counted: it
// pays single copy's first writes into the receive buffer), then it takes the model's path and
// tries the other on the fourth call (its first cost is paid early), then keeps the cheaper and
// retries the other only at the 16th call after that at the earliest.
TEST(CopyChooserSeed, StartsWithThePredictedPathAndTriesTheOtherOnceEarly) {
  for (bool single_cheaper : {false, true}) {
    CopyChooser c;
    // The model: one path 2x cheaper than the other, per byte of one reader's copy.
    c.seed(1 * MiB, single_cheaper ? 0.2 : 0.1, single_cheaper ? 0.1 : 0.2);
    EXPECT_TRUE(c.prefer_single(1 * MiB)) << "the first call goes single copy";
    c.measured(true, 1 * MiB, 25 * MiB);  // 25x: cold, and not counted
    EXPECT_DOUBLE_EQ(c.rate(true, 1 * MiB), single_cheaper ? 0.1 : 0.2);
    for (int call = 2; call <= 3; ++call) {
      EXPECT_EQ(c.prefer_single(1 * MiB), single_cheaper);
      // A whole call costs 10x the model's one copy (the agreement, several peers): the other
      // path's prediction must not win on that account.
      c.measured(single_cheaper, 1 * MiB, 1 * MiB);
    }
    EXPECT_NE(c.prefer_single(1 * MiB), single_cheaper) << "the fourth call tries the other";
    c.measured(!single_cheaper, 1 * MiB, 3 * MiB);  // 3x: warm-up, then one call at most
    int other = 0;
    for (int call = 1; call <= 18; ++call) {
      const bool single = c.prefer_single(1 * MiB);
      if (single != single_cheaper) other += call <= 1 ? 0 : 1;
      c.measured(single, 1 * MiB, single == single_cheaper ? 1 * MiB : 3 * MiB);
    }
    EXPECT_EQ(other, 0) << "single cheaper: " << single_cheaper;
  }
}

TEST(CopyChooserSeed, AMeasurementReplacesThePrediction) {
  CopyChooser c;
  c.seed(64 * KiB, 1.0, 0.5);
  c.measured(true, 64 * KiB, 64 * KiB * 50);  // the class's first call is cold: not counted
  EXPECT_DOUBLE_EQ(c.rate(true, 64 * KiB), 0.5);
  c.measured(true, 64 * KiB, 64 * KiB * 3);  // single copy measured at 3 ns/B
  EXPECT_DOUBLE_EQ(c.rate(true, 64 * KiB), 3.0);
  // The windows' prediction moves with it (the model's 2x), so single copy stays first...
  EXPECT_DOUBLE_EQ(c.rate(false, 64 * KiB), 6.0);
  c.measured(true, 64 * KiB, 64 * KiB * 2);  // ...and follows the warm figure
  EXPECT_DOUBLE_EQ(c.rate(false, 64 * KiB), 2 * c.rate(true, 64 * KiB));
  // The windows' first call is cold too; their next measurement replaces the prediction.
  c.measured(false, 64 * KiB, 64 * KiB * 40);
  EXPECT_DOUBLE_EQ(c.rate(false, 64 * KiB), 2 * c.rate(true, 64 * KiB));
  c.measured(false, 64 * KiB, 64 * KiB * 2);
  EXPECT_DOUBLE_EQ(c.rate(false, 64 * KiB), 2.0);
  EXPECT_LT(c.rate(false, 64 * KiB), c.rate(true, 64 * KiB));  // the windows are chosen now
}

}  // namespace
}  // namespace braid::coll
