// CopyChooser (collectives/intranode/single_copy.hpp): per size class, the cheaper of single
// copy and the windows by what each cost lately, the other retried now and then, so a machine
// whose core-to-core link slows down (or recovers) moves the choice.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "intranode/single_copy.hpp"

namespace braid::coll {
namespace {

constexpr size_t kBytes = size_t{1} << 20;

// Runs `calls` calls of kBytes on `c`, each costing what `cost(single)` says (ns per byte),
// and returns how many went single-copy.
template <class Cost>
int run(CopyChooser &c, int calls, Cost cost) {
  int single = 0;
  for (int i = 0; i < calls; ++i) {
    const bool s = c.prefer_single(kBytes);
    single += s ? 1 : 0;
    c.measured(s, kBytes, static_cast<uint64_t>(cost(s) * kBytes));
  }
  return single;
}

TEST(CopyChooser, TriesBothThenKeepsTheCheaper) {
  CopyChooser c;
  EXPECT_TRUE(c.prefer_single(kBytes));  // nothing measured: single copy first
  c.measured(true, kBytes, 80 * kBytes / 1000);
  EXPECT_FALSE(c.prefer_single(kBytes));  // then the windows once
  c.measured(false, kBytes, 45 * kBytes / 1000);
  // Windows cheaper (a fast link): nearly every call takes them.
  EXPECT_LE(run(c, 1000, [](bool s) { return s ? 0.080 : 0.045; }), 20);
  EXPECT_GT(c.rate(true, kBytes), c.rate(false, kBytes));
}

TEST(CopyChooser, MovesWhenTheLinkSlowsDownAndBack) {
  CopyChooser c;
  run(c, 300, [](bool s) { return s ? 0.080 : 0.045; });  // fast link: windows
  // A slow spell: the windows cost 5x; within a few calls single copy is taken, and it stays.
  run(c, 20, [](bool s) { return s ? 0.080 : 0.450; });
  EXPECT_GE(run(c, 500, [](bool s) { return s ? 0.080 : 0.450; }), 490);
  // The link recovers: the retries of the windows find it, and they are taken again.
  run(c, 600, [](bool s) { return s ? 0.080 : 0.045; });
  EXPECT_LE(run(c, 200, [](bool s) { return s ? 0.080 : 0.045; }), 10);
}

TEST(CopyChooser, OneSlowCallDoesNotFlipTheChoice) {
  CopyChooser c;
  run(c, 100, [](bool s) { return s ? 0.080 : 0.045; });
  // One descheduled call on the windows (4x) among normal ones.
  int calls = 0;
  const int single =
      run(c, 50, [&calls](bool s) { return s ? 0.080 : (++calls == 3 ? 0.18 : 0.045); });
  EXPECT_LE(single, 3);
}

// Single copy that is cheaper once warm but whose first calls cost 25x, 25x and 3x, and 4x
// again the first call after the windows (the 2-core EPYC VM: the first process_vm_readv of
// pages not read that way before, or lately): the retries go on while it warms up, and then
// keep it.
TEST(CopyChooser, ARetryThatWarmsUpIsJudgedByItsWarmCalls) {
  CopyChooser c;
  c.seed(kBytes, 0.070, 0.140);  // the model put the windows first
  int singles = 0;               // single-copy calls so far
  bool after_windows = false;
  auto cost = [&](bool s) {
    if (!s) {
      after_windows = true;
      return 0.070;
    }
    const int k = singles++;
    const bool back = std::exchange(after_windows, false);
    return k <= 1 ? 1.5 : k == 2 ? 0.2 : back ? 0.22 : 0.055;
  };
  run(c, 200, cost);
  EXPECT_GE(run(c, 200, cost), 190);
  EXPECT_LT(c.rate(true, kBytes), c.rate(false, kBytes));
}

// Single copy that warms up over several calls with a plateau close to the windows' figure
// (2-rank alltoall at 4 MiB on the VM, us per call after the windows: 1007, 553, 548, 463,
// 467, 425, 403, then about 357; the windows 520): the retry does not stop at the plateau, and
// single copy is kept once it wins.
TEST(CopyChooser, ARetryOnAPlateauCloseToTheKeptPathGoesOn) {
  CopyChooser c;
  c.seed(kBytes, 0.520, 0.700);  // the model put the windows first
  const double warming[] = {1.007, 0.553, 0.548, 0.463, 0.467, 0.425, 0.403};
  int since_windows = 0;  // single-copy calls since the last windowed one
  auto cost = [&](bool s) {
    if (!s) {
      since_windows = 0;
      return 0.520;
    }
    const int k = since_windows++;
    return k < 7 ? warming[k] : 0.357;
  };
  run(c, 50, cost);
  EXPECT_GE(run(c, 200, cost), 190);
  EXPECT_LT(c.rate(true, kBytes), c.rate(false, kBytes));
}

// A path that is slower warm or cold: a retry costs at most two calls of it (one to warm up,
// one that is not a quarter faster), and there are at most four retries in 1000 calls.
TEST(CopyChooser, ARetryOfASlowerPathIsShort) {
  CopyChooser c;
  run(c, 100, [](bool s) { return s ? 0.080 : 0.045; });
  EXPECT_LE(run(c, 1000, [](bool s) { return s ? 0.080 : 0.045; }), 2 * 4);
}

// A broadcast's root goes windows on a class's first call (its readers have not said what they
// want yet), then single copy (cold), then the windows again, cold after single copy: none of
// the three is counted, so the windows' warm figure decides, not the 26x call.
TEST(CopyChooser, ASeededClassStartedOnTheWindowsCountsNoColdCall) {
  CopyChooser c;
  c.seed(kBytes, 0.070, 0.140);  // the model puts the windows first
  c.measured(false, kBytes, static_cast<uint64_t>(0.1 * kBytes));  // first call: windows
  c.measured(true, kBytes, static_cast<uint64_t>(25.0 * kBytes));  // single copy, cold
  c.measured(false, kBytes, static_cast<uint64_t>(2.6 * kBytes));  // windows after single copy
  EXPECT_DOUBLE_EQ(c.rate(false, kBytes), 0.070) << "no cold call counted";
  c.measured(false, kBytes, static_cast<uint64_t>(0.1 * kBytes));
  EXPECT_NEAR(c.rate(false, kBytes), 0.1, 1e-4);
  // From here on the windows (0.1) beat single copy warm (0.2): nearly every call takes them.
  EXPECT_LE(run(c, 200, [](bool s) { return s ? 0.2 : 0.1; }), 2 * 3);
}

// Where a peer keeps voting for the windows (it cannot read by CMA), a seeded class's wish for
// a cold single copy stops after the third call and the model's choice takes over.
TEST(CopyChooser, AColdWishForSingleCopyEnds) {
  CopyChooser c;
  c.seed(kBytes, 0.070, 0.140);
  int wished = 0;
  for (int call = 0; call < 20; ++call) {
    wished += c.prefer_single(kBytes) ? 1 : 0;
    c.measured(false, kBytes, static_cast<uint64_t>(0.07 * kBytes));  // the vote: windows
  }
  EXPECT_LE(wished, 3 + 2);  // the first three, and at most one retry's two calls
}

// A retry that costs 25x its path's call when cold and stays slower warm: the next retries
// wait until what they cost is a twentieth of the calls in between.
TEST(CopyChooser, ColdRetriesThatLoseBecomeRare) {
  CopyChooser c;
  c.seed(kBytes, 0.070, 0.140);
  bool after_windows = true;
  auto cost = [&](bool s) {
    if (!s) {
      after_windows = true;
      return 0.070;
    }
    return std::exchange(after_windows, false) ? 1.75 : 0.12;  // 4 MiB on the VM: 7 ms, then 0.5
  };
  run(c, 2000, cost);
  double extra = 0;  // over the windows, in calls of them
  for (int i = 0; i < 20000; ++i) {
    const bool s = c.prefer_single(kBytes);
    const double x = cost(s);
    extra += (x - 0.070) / 0.070;
    c.measured(s, kBytes, static_cast<uint64_t>(x * kBytes));
  }
  EXPECT_LT(extra / 20000, 0.06);
}

// A broadcast's reader says after each call what it wants, and the root, a call ahead, may
// act on it one call later than the next: when single copy becomes the cheaper while the
// windows stay as they were, only the retries can find it; they still do.
TEST(CopyChooser, AChoiceTakenACallLateStillLearns) {
  CopyChooser c;
  bool said[2] = {false, false};  // what the reader said after the last two calls
  int single = 0;
  for (int call = 0; call < 2000; ++call) {
    const bool s = said[0];  // the root acts on what was said two calls ago
    const double single_cost = call < 300 ? 0.200 : 0.030;
    c.measured(s, kBytes, static_cast<uint64_t>((s ? single_cost : 0.070) * kBytes));
    said[0] = said[1];
    said[1] = c.prefer_single(kBytes);
    if (call >= 1800) single += s ? 1 : 0;
  }
  EXPECT_GE(single, 190);
}

TEST(CopyChooser, SizeClassesAreApart) {
  CopyChooser c;
  for (int i = 0; i < 50; ++i) {
    const bool small = c.prefer_single(8 << 10);
    c.measured(small, 8 << 10, small ? 4000 : 500);  // small: windows cheaper
    const bool large = c.prefer_single(4 << 20);
    c.measured(large, 4 << 20, large ? 300000 : 1800000);  // large: single copy cheaper
  }
  EXPECT_LT(c.rate(false, 8 << 10), c.rate(true, 8 << 10));
  EXPECT_LT(c.rate(true, 4 << 20), c.rate(false, 4 << 20));
  EXPECT_EQ(CopyChooser::class_of(4 << 10), 0u);
  EXPECT_EQ(CopyChooser::class_of(8 << 10), 1u);
  EXPECT_EQ(CopyChooser::class_of(size_t{1} << 60), CopyChooser::kClasses - 1);
}

// cma_read copies another process's memory, and says so when it cannot.
TEST(CmaRead, ReadsAChildsBufferAndFailsOnABadAddress) {
  static char text[64] = "written by the parent before the fork";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the child changes its copy, then waits to be read
    std::strcpy(text, "the child's own words");
    char b = 1;
    if (write(ready[1], &b, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char b = 0;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  char got[64] = {};
  const bool ok = cma_read(child, reinterpret_cast<uintptr_t>(text), got, sizeof got);
  const bool bad = cma_read(child, 8, got + 32, 8);  // page 0 is never mapped
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  if (!ok && errno == EPERM) GTEST_SKIP() << "this kernel refuses process_vm_readv";
  ASSERT_TRUE(ok) << std::strerror(errno);
  EXPECT_STREQ(got, "the child's own words");
  EXPECT_FALSE(bad);
}

}  // namespace
}  // namespace braid::coll
