// Ranks that share an unbound CPU mask with more ranks than it has CPUs go back to a CPU of
// their own after a long wait (src/node/home_cpu.hpp). Rank 0 puts itself on another CPU of
// its mask and keeps the others waiting that long: waking them, it must come back (counted in
// "home_cpu_moves"). Whether a rank has a home follows node discovery's rule, worked out here
// from every rank's host and mask; without one (enough CPUs, ranks bound to a core, several
// hosts, BRAID_HOME_CPU=off) nothing may move.
#include <sched.h>
#include <unistd.h>
#include <braid/braid.hpp>

#include <array>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

uint64_t moves() {
  return braid::Comm(world()).counters()["home_cpu_moves"];
}

// This rank's host (name and boot, as braid tells hosts apart) and affinity mask.
struct Placement {
  uint64_t host = 0;
  std::array<uint64_t, 16> mask{};  // CPUs 0..1023, as node discovery exchanges them
};

Placement here() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  Placement p;
  p.host = std::hash<std::string>{}(std::string(name) + "/" + boot);
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  for (size_t c = 0; c < p.mask.size() * 64 && c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) p.mask[c / 64] |= uint64_t{1} << (c % 64);
  return p;
}

// The CPU node discovery deals rank `me`, or -1 (node_discovery.hpp, home_cpu_of).
int expected_home(const std::vector<Placement> &all, int me) {
  const char *off = std::getenv("BRAID_HOME_CPU");
  if (off != nullptr && std::string(off) == "off") return -1;
  const Placement &mine = all[static_cast<size_t>(me)];
  int cpus = 0;
  for (uint64_t w : mine.mask) cpus += std::popcount(w);
  int sharers = 0, index = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].host != mine.host || all[r].mask != mine.mask) continue;
    if (static_cast<int>(r) < me) ++index;
    ++sharers;
  }
  if (cpus < 2 || sharers <= cpus) return -1;
  for (int c = 0, k = index % cpus; c < 1024; ++c)
    if ((mine.mask[static_cast<size_t>(c / 64)] >> (c % 64) & 1) != 0 && k-- == 0) return c;
  return -1;
}

TEST(HomeCpu, ARankAwayFromHomeReturnsWhenItWakesLongSleepers) {
  braid::Comm comm(world());
  std::vector<Placement> all(static_cast<size_t>(size()));
  const Placement mine = here();
  ASSERT_EQ(braid_allgather(&mine, all.data(), sizeof mine, BRAID_UINT8, world()), BRAID_SUCCESS);
  const int home = expected_home(all, 0);  // rank 0's, as every rank computes it
  const uint64_t before = moves();
  // Rank 0 away and busy for 150 ms while the others wait for it in a barrier, past the
  // scheduler's 20 ms kHomeAfter: they sleep as long sleepers, and rank 0, waking them, goes
  // home. (Rank 0 as the sleeper instead was flaky as a test: the kernel itself often woke it on
  // its home CPU, and then nothing needs to move.) The kernel may move a busy rank home too; not
  // 10 times in a row.
  int32_t again = 1;
  for (int attempt = 0; attempt < 10 && again != 0; ++attempt) {
    if (rank() == 0 && home >= 0) {
      cpu_set_t away, whole;
      CPU_ZERO(&whole);
      sched_getaffinity(0, sizeof whole, &whole);
      CPU_ZERO(&away);
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &whole) && c != home) CPU_SET(c, &away);
      // EXPECT, not ASSERT: the others wait in the barrier below either way.
      EXPECT_EQ(sched_setaffinity(0, sizeof away, &away), 0);
      EXPECT_EQ(sched_setaffinity(0, sizeof whole, &whole), 0);
    }
    if (rank() == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS);
    again = rank() == 0 && home >= 0 && moves() == before ? 1 : 0;
    ASSERT_EQ(braid_broadcast(&again, 1, BRAID_INT32, 0, world()), BRAID_SUCCESS);
  }
  if (rank() == 0) {
    if (home >= 0) {
      EXPECT_GT(moves(), before) << "rank 0 never went back to CPU " << home;
    } else {
      EXPECT_EQ(moves(), before) << "rank 0 has no home CPU, yet it was moved";
    }
  }
  // Every rank's moves are its own: none at all without a home.
  if (expected_home(all, rank()) < 0) {
    EXPECT_EQ(moves(), 0u) << "rank " << rank() << " has no home CPU";
  }
}

}  // namespace
}  // namespace mp
