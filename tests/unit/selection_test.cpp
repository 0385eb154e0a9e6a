// The algorithm selection table: the default switch points to the byte, the special case for
// fewer elements than ranks, BRAID_*_ALGO overrides, the table's own consistency, and explain().
#include "selection/selection.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/coll_kind.hpp"
#include "error.hpp"

namespace braid::coll {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;
// The largest world the environment contract accepts (BRAID_SIZE <= 2^20).
constexpr int kMaxRanks = 1 << 20;

const std::vector<int> kRankCounts = {1, 2, 3, 4, 5, 7, 8, 16, 63, 64, 1000, kMaxRanks};

// Sizes around every default switch point, plus the extremes.
const std::vector<size_t> kSizes = {0,
                                    1,
                                    8,
                                    16 * KiB - 1,
                                    16 * KiB,
                                    16 * KiB + 1,
                                    256 * KiB - 1,
                                    256 * KiB,
                                    256 * KiB + 1,
                                    512 * KiB - 1,
                                    512 * KiB,
                                    512 * KiB + 1,
                                    1 * MiB,
                                    1024 * MiB,
                                    SIZE_MAX - 1};

// Enough elements that the "fewer elements than ranks" special case never applies.
Choice pick(const SelectionTable &t, CollKind kind, size_t bytes, int ranks) {
  return t.choose(kind, bytes, std::max<size_t>(bytes, static_cast<size_t>(ranks)), ranks);
}

std::string name_of(const Choice &c) {
  return c.algorithm != nullptr ? c.algorithm->name : "(null)";
}

// The flat algorithms of a kind. The node-local ones (shm, hierarchical: the same names for
// both kinds) run only on matching layouts; node_map_test.cpp covers them.
std::vector<std::string> names_of_kind(CollKind kind) {
  std::vector<std::string> names;
  for (const Algorithm &a : all_algorithms())
    if (a.kind == kind && std::string(a.name) != "shm" && std::string(a.name) != "hierarchical")
      names.emplace_back(a.name);
  return names;
}

// --- The defaults, byte by byte -------------------------------------------------------------

TEST(Selection, AllreduceDefaultSwitchPoints) {
  const SelectionTable t = SelectionTable::defaults();
  struct Expect {
    size_t bytes;
    const char *algorithm;
    size_t segment;
    int rule;
  };
  const Expect expects[] = {
      {0, "recursive_doubling", 0, 0},
      {1, "recursive_doubling", 0, 0},
      {16 * KiB - 1, "recursive_doubling", 0, 0},
      {16 * KiB, "rabenseifner", 0, 1},
      {16 * KiB + 1, "rabenseifner", 0, 1},
      {512 * KiB - 1, "rabenseifner", 0, 1},
      {512 * KiB, "ring", 1 * MiB, 2},
      {512 * KiB + 1, "ring", 1 * MiB, 2},
      {64 * MiB, "ring", 1 * MiB, 2},
      {SIZE_MAX - 1, "ring", 1 * MiB, 2},
  };
  for (int ranks : kRankCounts) {
    for (const Expect &e : expects) {
      Choice c = pick(t, CollKind::allreduce, e.bytes, ranks);
      ASSERT_NE(c.algorithm, nullptr) << e.bytes << " bytes on " << ranks << " ranks";
      EXPECT_STREQ(c.algorithm->name, e.algorithm) << e.bytes << " bytes on " << ranks;
      EXPECT_EQ(c.algorithm->kind, CollKind::allreduce);
      EXPECT_NE(c.algorithm->fn, nullptr);
      EXPECT_EQ(c.segment_bytes, e.segment) << e.bytes << " bytes on " << ranks;
      EXPECT_EQ(c.rule, e.rule) << e.bytes << " bytes on " << ranks;
      EXPECT_EQ(describe(c), "rule " + std::to_string(e.rule + 1));
    }
  }
}

TEST(Selection, BroadcastDefaultSwitchPoints) {
  const SelectionTable t = SelectionTable::defaults();
  for (int ranks : kRankCounts) {
    for (size_t bytes : {size_t{0}, size_t{1}, 64 * KiB, 256 * KiB - 1}) {
      Choice c = pick(t, CollKind::broadcast, bytes, ranks);
      EXPECT_EQ(name_of(c), "binomial") << bytes << " bytes on " << ranks;
      EXPECT_EQ(c.rule, 3);
      EXPECT_EQ(c.segment_bytes, 0u);
    }
    for (size_t bytes : {256 * KiB, 256 * KiB + 1, 4 * MiB, SIZE_MAX - 1}) {
      Choice c = pick(t, CollKind::broadcast, bytes, ranks);
      if (ranks <= 2) {
        EXPECT_EQ(name_of(c), "binomial") << bytes << " bytes on " << ranks;
        EXPECT_EQ(c.rule, 4);
      } else {
        EXPECT_EQ(name_of(c), "scatter_allgather") << bytes << " bytes on " << ranks;
        EXPECT_EQ(c.rule, 5);
      }
      EXPECT_EQ(c.segment_bytes, 0u);
    }
  }
}

TEST(Selection, BarrierIsDissemination) {
  const SelectionTable t = SelectionTable::defaults();
  for (int ranks : kRankCounts) {
    for (size_t bytes : kSizes) {
      Choice c = t.choose(CollKind::barrier, bytes, 0, ranks);
      EXPECT_EQ(name_of(c), "dissemination") << bytes << " bytes on " << ranks;
      EXPECT_EQ(c.rule, 6);
    }
  }
}

// --- Fewer elements than ranks --------------------------------------------------------------

TEST(Selection, FewerElementsThanRanksIsRecursiveDoubling) {
  const SelectionTable t = SelectionTable::defaults();
  for (int ranks : {2, 3, 8, 1000, kMaxRanks}) {
    const size_t few = static_cast<size_t>(ranks) - 1;
    // Even at sizes where the rules would pick ring or rabenseifner (large elements).
    for (size_t bytes : {size_t{0}, 32 * KiB, 512 * KiB, 64 * MiB}) {
      Choice c = t.choose(CollKind::allreduce, bytes, few, ranks);
      EXPECT_EQ(name_of(c), "recursive_doubling") << bytes << " bytes on " << ranks;
      EXPECT_EQ(c.rule, -1);
      EXPECT_EQ(c.segment_bytes, 0u);
      EXPECT_EQ(describe(c), "fewer elements than ranks");
    }
    // count == ranks is back to the rules.
    Choice c = t.choose(CollKind::allreduce, 64 * MiB, static_cast<size_t>(ranks), ranks);
    EXPECT_EQ(name_of(c), "ring") << ranks;
    EXPECT_EQ(c.rule, 2);
  }
  // Zero elements on one rank: fewer elements than ranks, still recursive_doubling.
  EXPECT_EQ(name_of(t.choose(CollKind::allreduce, 0, 0, 1)), "recursive_doubling");
  // The special case is allreduce-only.
  Choice b = t.choose(CollKind::broadcast, 4 * MiB, 1, 8);
  EXPECT_EQ(name_of(b), "scatter_allgather");
  EXPECT_EQ(b.rule, 5);
}

// --- Overrides ------------------------------------------------------------------------------

TEST(Selection, AllreduceOverrideForcesEverySize) {
  for (const std::string &forced : names_of_kind(CollKind::allreduce)) {
    SelectionTable t = SelectionTable::defaults();
    t.set_override(CollKind::allreduce, forced);
    for (int ranks : kRankCounts) {
      for (size_t bytes : kSizes) {
        for (size_t count : {size_t{0}, size_t{1}, bytes, SIZE_MAX}) {
          Choice c = t.choose(CollKind::allreduce, bytes, count, ranks);
          EXPECT_EQ(name_of(c), forced) << bytes << " bytes, " << count << " elements, " << ranks;
          EXPECT_EQ(c.rule, -1);
          EXPECT_EQ(describe(c), "BRAID_ALLREDUCE_ALGO");
        }
      }
      // The override is allreduce-only.
      EXPECT_EQ(pick(t, CollKind::broadcast, 4 * MiB, ranks).rule, ranks <= 2 ? 4 : 5);
      EXPECT_EQ(name_of(pick(t, CollKind::barrier, 0, ranks)), "dissemination");
    }
  }
}

TEST(Selection, BroadcastOverrideForcesEverySize) {
  for (const std::string &forced : names_of_kind(CollKind::broadcast)) {
    SelectionTable t = SelectionTable::defaults();
    t.set_override(CollKind::broadcast, forced);
    for (int ranks : kRankCounts) {
      for (size_t bytes : kSizes) {
        Choice c = pick(t, CollKind::broadcast, bytes, ranks);
        EXPECT_EQ(name_of(c), forced) << bytes << " bytes on " << ranks;
        EXPECT_EQ(c.rule, -1);
        EXPECT_EQ(describe(c), "BRAID_BROADCAST_ALGO");
      }
      // The override is broadcast-only.
      EXPECT_EQ(pick(t, CollKind::allreduce, 4 * MiB, ranks).rule, 2);
      EXPECT_EQ(name_of(pick(t, CollKind::barrier, 0, ranks)), "dissemination");
    }
  }
}

// Every kind's BRAID_<KIND>_ALGO, each of its flat algorithms: that algorithm at every size and
// rank count (also where fewer elements than ranks would pick another), and no other kind's
// choice changes.
TEST(Selection, EveryKindsOverrideForcesEverySizeAndNoOtherKind) {
  const SelectionTable d = SelectionTable::defaults();
  for (size_t k = 0; k < kKindCount; ++k) {
    const auto kind = static_cast<CollKind>(k);
    const KindInfo &info = kind_info(kind);
    SCOPED_TRACE(info.name);
    const std::vector<std::string> names = names_of_kind(kind);
    EXPECT_FALSE(names.empty());
    for (const std::string &forced : names) {
      SelectionTable t = SelectionTable::defaults();
      t.set_override(kind, forced);
      for (int ranks : {1, 2, 3, 4, 8, 1000}) {
        for (size_t bytes : kSizes) {
          for (size_t count : {size_t{0}, size_t{1}, bytes}) {
            const Choice c = t.choose(kind, bytes, count, ranks);
            EXPECT_EQ(name_of(c), forced) << bytes << " bytes, " << count << " elements, " << ranks;
            EXPECT_EQ(c.rule, -1);
            EXPECT_EQ(describe(c), info.override_var);
          }
        }
        for (size_t other = 0; other < kKindCount; ++other) {
          if (other == k) continue;
          const auto o = static_cast<CollKind>(other);
          EXPECT_EQ(pick(t, o, 64 * KiB, ranks).algorithm, pick(d, o, 64 * KiB, ranks).algorithm)
              << "BRAID_" << info.name << "_ALGO=" << forced << " changed " << kind_name(o);
        }
      }
    }
  }
}

TEST(Selection, LaterOverrideReplacesEarlierOne) {
  SelectionTable t = SelectionTable::defaults();
  t.set_override(CollKind::allreduce, "ring");
  t.set_override(CollKind::allreduce, "rabenseifner");
  EXPECT_EQ(name_of(pick(t, CollKind::allreduce, 8, 4)), "rabenseifner");
}

TEST(Selection, EmptyOverrideIsANoOp) {
  SelectionTable t = SelectionTable::defaults();
  t.set_override(CollKind::allreduce, "");
  t.set_override(CollKind::broadcast, "");
  const SelectionTable d = SelectionTable::defaults();
  for (int ranks : kRankCounts) {
    for (size_t bytes : kSizes) {
      for (CollKind kind : {CollKind::allreduce, CollKind::broadcast, CollKind::barrier}) {
        Choice a = pick(t, kind, bytes, ranks);
        Choice b = pick(d, kind, bytes, ranks);
        EXPECT_EQ(a.algorithm, b.algorithm) << bytes << " bytes on " << ranks;
        EXPECT_EQ(a.rule, b.rule);
        EXPECT_EQ(a.segment_bytes, b.segment_bytes);
      }
    }
  }
  EXPECT_THAT(t.explain(4), Not(HasSubstr("override")));
  // An empty override does not clear an earlier one either.
  t.set_override(CollKind::allreduce, "ring");
  t.set_override(CollKind::allreduce, "");
  EXPECT_EQ(name_of(pick(t, CollKind::allreduce, 8, 4)), "ring");
}

void expect_refused(CollKind kind, const std::string &name, const char *variable) {
  SelectionTable t = SelectionTable::defaults();
  try {
    t.set_override(kind, name);
    ADD_FAILURE() << "override '" << name << "' accepted";
  } catch (const detail::Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_THAT(f.message(), HasSubstr(std::string(variable) + "='" + name + "'"));
    for (const std::string &valid : names_of_kind(kind))
      EXPECT_THAT(f.message(), HasSubstr(valid)) << "message does not list " << valid;
    const CollKind other = kind == CollKind::allreduce ? CollKind::broadcast : CollKind::allreduce;
    for (const std::string &invalid : names_of_kind(other))
      if (invalid != name) {
        EXPECT_THAT(f.message(), Not(HasSubstr(invalid)));
      }
  }
  // A refused override leaves the table as it was.
  EXPECT_EQ(pick(t, kind, 8, 4).rule, kind == CollKind::allreduce ? 0 : 3);
}

TEST(Selection, UnknownOverrideNamesTheValidOnes) {
  for (const char *bad : {"bogus", "Ring", "ring ", " ring", "recursive-doubling", "binomial",
                          "dissemination", "ring,rabenseifner"})
    expect_refused(CollKind::allreduce, bad, "BRAID_ALLREDUCE_ALGO");
  for (const char *bad : {"bogus", "Binomial", "ring", "scatter-allgather", "dissemination"})
    expect_refused(CollKind::broadcast, bad, "BRAID_BROADCAST_ALGO");
}

TEST(Selection, UnknownOverrideListsNamesExactly) {
  SelectionTable t = SelectionTable::defaults();
  try {
    t.set_override(CollKind::allreduce, "nope");
    ADD_FAILURE() << "accepted";
  } catch (const detail::Failure &f) {
    EXPECT_THAT(f.message(), HasSubstr("valid: recursive_doubling, rabenseifner, ring"));
  }
}

// --- The table itself -----------------------------------------------------------------------

TEST(Selection, EveryRuleNamesAnAlgorithmOfItsKind) {
  const SelectionTable t = SelectionTable::defaults();
  ASSERT_FALSE(t.rules().empty());
  for (size_t i = 0; i < t.rules().size(); ++i) {
    const Rule &r = t.rules()[i];
    SCOPED_TRACE("rule " + std::to_string(i + 1));
    ASSERT_NE(r.algorithm, nullptr);
    const Algorithm *a = find_algorithm(r.kind, r.algorithm);
    ASSERT_NE(a, nullptr) << r.algorithm;
    EXPECT_EQ(a->kind, r.kind);
    EXPECT_LT(r.min_bytes, r.max_bytes);
    EXPECT_GE(r.min_ranks, 1);
    EXPECT_LE(r.min_ranks, r.max_ranks);
  }
}

TEST(Selection, AlgorithmRegistryIsConsistent) {
  std::set<std::pair<int, std::string>> seen;
  for (const Algorithm &a : all_algorithms()) {
    ASSERT_NE(a.name, nullptr);
    EXPECT_NE(a.fn, nullptr) << a.name;
    ASSERT_NE(a.summary, nullptr);
    EXPECT_STRNE(a.summary, "") << a.name;
    EXPECT_TRUE(seen.emplace(static_cast<int>(a.kind), a.name).second) << "duplicate " << a.name;
    EXPECT_EQ(find_algorithm(a.kind, a.name), &a);
  }
  EXPECT_EQ(find_algorithm(CollKind::allreduce, "binomial"), nullptr);
  EXPECT_EQ(find_algorithm(CollKind::broadcast, "ring"), nullptr);
  EXPECT_EQ(find_algorithm(CollKind::allreduce, ""), nullptr);
  EXPECT_EQ(find_algorithm(CollKind::allreduce, "rin"), nullptr);
  EXPECT_EQ(find_algorithm(CollKind::allreduce, "ringg"), nullptr);
}

// Walks the rules: for every rank count (every rank interval the rules distinguish, up to the
// largest world) each kind's rules cover [0, SIZE_MAX) without a gap, and choose() agrees with
// the first matching rule at every rule boundary.
TEST(Selection, RulesCoverEverySizeForEveryRankCount) {
  const SelectionTable t = SelectionTable::defaults();
  const std::vector<Rule> &rules = t.rules();
  std::set<int> rank_points = {1, 2, kMaxRanks};
  for (const Rule &r : rules) {
    for (long long p :
         {static_cast<long long>(r.min_ranks) - 1, static_cast<long long>(r.min_ranks),
          static_cast<long long>(r.max_ranks), static_cast<long long>(r.max_ranks) + 1})
      if (p >= 1 && p <= kMaxRanks) rank_points.insert(static_cast<int>(p));
  }
  for (CollKind kind : {CollKind::allreduce, CollKind::broadcast, CollKind::barrier}) {
    for (int ranks : rank_points) {
      SCOPED_TRACE(std::string(kind_name(kind)) + " on " + std::to_string(ranks) + " ranks");
      std::vector<std::pair<size_t, size_t>> ranges;
      std::set<size_t> boundaries;
      for (const Rule &r : rules) {
        if (r.kind != kind || ranks < r.min_ranks || ranks > r.max_ranks) continue;
        ranges.emplace_back(r.min_bytes, r.max_bytes);
        boundaries.insert({r.min_bytes, r.max_bytes - 1});
        if (r.min_bytes > 0) boundaries.insert(r.min_bytes - 1);
        if (r.max_bytes < SIZE_MAX) boundaries.insert(r.max_bytes);
      }
      std::sort(ranges.begin(), ranges.end());
      size_t covered = 0;  // [0, covered) is covered
      for (const auto &[lo, hi] : ranges) {
        EXPECT_LE(lo, covered) << "gap [" << covered << ", " << lo << ")";
        covered = std::max(covered, hi);
      }
      EXPECT_EQ(covered, SIZE_MAX) << "sizes from " << covered << " up have no rule";

      for (size_t bytes : boundaries) {
        if (bytes == SIZE_MAX) continue;  // max_bytes is exclusive
        int first = -1;
        for (size_t i = 0; i < rules.size() && first < 0; ++i) {
          const Rule &r = rules[i];
          if (r.kind == kind && bytes >= r.min_bytes && bytes < r.max_bytes &&
              ranks >= r.min_ranks && ranks <= r.max_ranks)
            first = static_cast<int>(i);
        }
        ASSERT_GE(first, 0) << bytes << " bytes";
        Choice c = pick(t, kind, bytes, ranks);
        EXPECT_EQ(c.rule, first) << bytes << " bytes";
        EXPECT_EQ(c.algorithm, find_algorithm(kind, rules[first].algorithm)) << bytes << " bytes";
        EXPECT_EQ(c.segment_bytes, rules[first].segment_bytes) << bytes << " bytes";
      }
    }
  }
}

TEST(Selection, NoRuleForAnImpossibleWorldIsAnInternalError) {
  const SelectionTable t = SelectionTable::defaults();
  try {
    t.choose(CollKind::broadcast, 1024, 1024, 0);
    ADD_FAILURE() << "0 ranks accepted";
  } catch (const detail::Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INTERNAL);
    EXPECT_THAT(f.message(), HasSubstr("broadcast"));
    EXPECT_THAT(f.message(), HasSubstr("1024 bytes on 0 ranks"));
  }
}

// --- explain() and the formatting helpers ---------------------------------------------------

TEST(Selection, ExplainMentionsEveryRule) {
  const SelectionTable t = SelectionTable::defaults();
  const std::string text = t.explain(8);
  for (size_t i = 0; i < t.rules().size(); ++i) {
    const Rule &r = t.rules()[i];
    const std::string line = "rule " + std::to_string(i + 1) + ": " + kind_name(r.kind) + " [" +
                             format_bytes(r.min_bytes) + ", " + format_bytes(r.max_bytes) + ")";
    EXPECT_THAT(text, HasSubstr(line));
    EXPECT_THAT(text, HasSubstr(std::string("-> ") + r.algorithm));
  }
  EXPECT_THAT(text, HasSubstr("[16 KiB, 512 KiB) on 1..any ranks -> rabenseifner"));
  EXPECT_THAT(text, HasSubstr("[512 KiB, inf) on 1..any ranks -> ring (segment 1 MiB)"));
  EXPECT_THAT(text, HasSubstr("[256 KiB, inf) on 1..2 ranks -> binomial"));
  EXPECT_THAT(text, HasSubstr("[256 KiB, inf) on 3..any ranks -> scatter_allgather"));
  EXPECT_THAT(text, HasSubstr("fewer elements than ranks -> recursive_doubling"));
  EXPECT_THAT(text, Not(HasSubstr("override")));
  EXPECT_THAT(text, HasSubstr("choice per size on 8 ranks"));
  EXPECT_THAT(text, HasSubstr("512 KiB: allreduce ring (rule 3), broadcast scatter_allgather "
                              "(rule 6)"));
  // 8 bytes of float32 is 2 elements: fewer than 8 ranks.
  EXPECT_THAT(text, HasSubstr("8 B: allreduce recursive_doubling (fewer elements than ranks)"));
  EXPECT_THAT(t.explain(2), HasSubstr("512 KiB: allreduce ring (rule 3), broadcast binomial "
                                      "(rule 5)"));
}

TEST(Selection, ExplainMentionsEveryOverride) {
  SelectionTable t = SelectionTable::defaults();
  t.set_override(CollKind::allreduce, "rabenseifner");
  std::string text = t.explain(4);
  EXPECT_THAT(text, HasSubstr("override: BRAID_ALLREDUCE_ALGO=rabenseifner"));
  EXPECT_THAT(text, Not(HasSubstr("BRAID_BROADCAST_ALGO")));
  EXPECT_THAT(text, HasSubstr("32 MiB: allreduce rabenseifner (BRAID_ALLREDUCE_ALGO)"));

  t.set_override(CollKind::broadcast, "binomial");
  text = t.explain(4);
  EXPECT_THAT(text, HasSubstr("override: BRAID_ALLREDUCE_ALGO=rabenseifner"));
  EXPECT_THAT(text, HasSubstr("override: BRAID_BROADCAST_ALGO=binomial"));
  EXPECT_THAT(text, HasSubstr("broadcast binomial (BRAID_BROADCAST_ALGO)"));
  // The rules are still listed under an override.
  for (size_t i = 0; i < t.rules().size(); ++i)
    EXPECT_THAT(text, HasSubstr("rule " + std::to_string(i + 1) + ": "));
}

TEST(Selection, FormatBytes) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1), "1 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1536 B");
  EXPECT_EQ(format_bytes(16 * KiB), "16 KiB");
  EXPECT_EQ(format_bytes(1025 * KiB), "1025 KiB");
  EXPECT_EQ(format_bytes(1 * MiB), "1 MiB");
  EXPECT_EQ(format_bytes(3 * MiB), "3 MiB");
  EXPECT_EQ(format_bytes(1024 * MiB), "1024 MiB");
  EXPECT_EQ(format_bytes(SIZE_MAX), "inf");
  EXPECT_EQ(format_bytes(SIZE_MAX - 1), std::to_string(SIZE_MAX - 1) + " B");
}

TEST(Selection, DescribeRuleOrReason) {
  Choice c;
  c.rule = 0;
  EXPECT_EQ(describe(c), "rule 1");
  c.rule = 6;
  EXPECT_EQ(describe(c), "rule 7");
  c.rule = -1;
  c.reason = "because";
  EXPECT_EQ(describe(c), "because");
}

}  // namespace
}  // namespace braid::coll
