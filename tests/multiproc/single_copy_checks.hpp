// What the single-copy tests (single_copy_test.cpp, single_copy_reductions_test.cpp) share:
// the counter of calls that went single copy, what it must say under each BRAID_CMA mode, and
// the values the ranks send.
#pragma once

#include <gtest/gtest.h>
#include <braid/braid.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "rank_env.hpp"

namespace mp {

inline uint64_t single_copy_calls() {
  return braid::Comm(world()).counters()["intranode_single_copy_calls"];
}

inline std::string cma_env() {
  const char *v = std::getenv("BRAID_CMA");
  return v ? v : "";
}

// Checks how many of `calls` calls went single-copy on this rank: none where the node path is
// not taken or BRAID_CMA=off; under BRAID_CMA=on all of them, but for broadcast and scatter
// (`first_learns`) the first two of a size class may take the windows: the root offers its
// buffer once every reader has said, after reading one of that class, that it wants single copy,
// and a root that does not wait for its readers can be a call ahead of what they said (never
// two: it enters call t + 2 only after they all entered t + 1). Under BRAID_CMA=auto any number
// (chosen by what the ranks measure).
inline void check_count(uint64_t moved, const char *algo_var, int calls, bool first_learns,
                        const std::string &what) {
  if (!shm_selected(algo_var) || cma_env() == "off") {
    EXPECT_EQ(moved, 0u) << what;
  } else if (cma_env() == "on") {
    EXPECT_LE(moved, static_cast<uint64_t>(calls)) << what;
    EXPECT_GE(moved, static_cast<uint64_t>(first_learns ? calls - 2 : calls)) << what;
  }
}

inline int32_t value(int r, size_t i, int call) {
  return static_cast<int32_t>(r * 1000003 + static_cast<int>(i) * 7 + call);
}

// The integer ops' inputs, and what MAX, BXOR or AVG (truncated) over every rank's give.
inline int32_t int_input(int r, size_t i) {
  return value(r, i, 0) % 100000;
}
inline int64_t int_op_of_all(braid_op_t op, size_t i) {
  int64_t want = int_input(0, i);
  for (int r = 1; r < size(); ++r) {
    const int64_t x = int_input(r, i);
    want = op == BRAID_MAX ? std::max(want, x) : op == BRAID_BXOR ? (want ^ x) : want + x;
  }
  return op == BRAID_AVG ? want / size() : want;
}

inline std::vector<float> floats_of(int r, size_t count) {
  std::mt19937 g(1234u + static_cast<unsigned>(r));
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v) x = d(g);
  return v;
}

}  // namespace mp
