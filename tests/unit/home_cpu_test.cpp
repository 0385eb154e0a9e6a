// Moving a thread to its home CPU (node/home_cpu.hpp; which CPU that is: oversubscription_test):
// the move puts the thread there and leaves its affinity mask as it was.
#include <gtest/gtest.h>
#include <sched.h>

#include <thread>
#include <vector>

#include "node/home_cpu.hpp"

namespace braid::detail {
namespace {

// Restores the test thread's affinity mask, whatever a test did to it.
struct KeepMask {
  cpu_set_t mask;
  KeepMask() {
    CPU_ZERO(&mask);
    sched_getaffinity(0, sizeof mask, &mask);
  }
  ~KeepMask() { sched_setaffinity(0, sizeof mask, &mask); }
};

std::vector<int> cpus_of(const cpu_set_t &mask) {
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) out.push_back(c);
  return out;
}

TEST(HomeCpu, MoveRunsTheThreadThereAndKeepsItsMask) {
  KeepMask keep;
  const std::vector<int> cpus = cpus_of(keep.mask);
  if (cpus.size() < 2) GTEST_SKIP() << "this thread may run on one CPU only";
  for (int target : {cpus[1], cpus[0], cpus[1]}) {
    const int ran_on = move_to_cpu(target);
    // -1 only when the thread already ran there (the kernel may have put it there itself).
    if (ran_on != -1) {
      EXPECT_EQ(ran_on, target);
    }
    cpu_set_t after;
    CPU_ZERO(&after);
    ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &keep.mask)) << "the mask changed moving to CPU " << target;
  }
}

TEST(HomeCpu, NoMoveOutsideTheMaskOrWithOneCpu) {
  KeepMask keep;
  const std::vector<int> cpus = cpus_of(keep.mask);
  EXPECT_EQ(move_to_cpu(-1), -1);
  int outside = 0;
  while (outside < CPU_SETSIZE && CPU_ISSET(outside, &keep.mask)) ++outside;
  if (outside < CPU_SETSIZE) {
    EXPECT_EQ(move_to_cpu(outside), -1);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "this thread may run on one CPU only";
  // Held to one CPU (as a bound rank is), it stays: the other CPU is not in its mask.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[0], &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(move_to_cpu(cpus[1]), -1);
  EXPECT_EQ(sched_getcpu(), cpus[0]);
}

TEST(HomeCpu, OnlyTheThreadThatSetItReturnsHome) {
  KeepMask keep;
  const std::vector<int> cpus = cpus_of(keep.mask);
  if (cpus.size() < 2) GTEST_SKIP() << "this thread may run on one CPU only";
  set_home_cpu(cpus[1]);
  const uint64_t before = home_cpu_moves();
  // Away from home, then back: return_home moves it and counts the move. The kernel may move
  // the thread home by itself in between; not a hundred times in a row.
  for (int i = 0; i < 100 && home_cpu_moves() == before; ++i) {
    move_to_cpu(cpus[0]);
    return_home();
  }
  EXPECT_EQ(home_cpu_moves(), before + 1);
  // Another thread of the process has no home: nothing moves it.
  std::thread other([&] {
    move_to_cpu(cpus[0]);
    return_home();
  });
  other.join();
  EXPECT_EQ(home_cpu_moves(), before + 1);
  set_home_cpu(-1);
  const uint64_t now = home_cpu_moves();
  move_to_cpu(cpus[0]);
  return_home();  // no home any more: nothing moves
  EXPECT_EQ(home_cpu_moves(), now);
}

}  // namespace
}  // namespace braid::detail
