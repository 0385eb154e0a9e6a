// Communicators: split (colors, keys, BRAID_UNDEFINED), dup, nested splits, free, and
// collectives on parent and child at once. Every expected value is computed from the world
// ranks the test assigned, never read back from braid.
#include <sys/statvfs.h>
#include <braid/braid.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

// Frees on scope exit, so a failed assertion does not leak a communicator into later tests.
struct Owned {
  braid_comm_t c = nullptr;
  ~Owned() {
    if (c != nullptr) braid_comm_free(&c);
  }
};

// Every member's world rank, gathered through the child with an allreduce (sum) in which each
// member fills its own slot: checks the child's rank order and that it moves data.
std::vector<int64_t> world_ranks_of(braid_comm_t c) {
  const int n = braid_comm_size(c);
  std::vector<int64_t> slots(static_cast<size_t>(n), 0);
  slots[static_cast<size_t>(braid_comm_rank(c))] = rank();
  EXPECT_EQ(braid_allreduce(slots.data(), slots.data(), slots.size(), BRAID_INT64, BRAID_SUM, c),
            BRAID_SUCCESS)
      << braid_last_error();
  return slots;
}

TEST(Comm, SplitEvenOdd) {
  Owned half;
  ASSERT_EQ(braid_comm_split(world(), rank() % 2, rank(), &half.c), BRAID_SUCCESS)
      << braid_last_error();
  ASSERT_NE(half.c, nullptr);
  std::vector<int64_t> expected;
  for (int r = rank() % 2; r < size(); r += 2) expected.push_back(r);
  EXPECT_EQ(braid_comm_size(half.c), static_cast<int>(expected.size()));
  EXPECT_EQ(braid_comm_rank(half.c), rank() / 2);
  EXPECT_EQ(world_ranks_of(half.c), expected);
  // Broadcast from the child's last rank, and a barrier.
  std::vector<int32_t> v(3000, rank());
  const int root = braid_comm_size(half.c) - 1;
  ASSERT_EQ(braid_broadcast(v.data(), v.size(), BRAID_INT32, root, half.c), BRAID_SUCCESS)
      << braid_last_error();
  for (int32_t x : v) ASSERT_EQ(x, expected.back());
  ASSERT_EQ(braid_barrier(half.c), BRAID_SUCCESS) << braid_last_error();
}

TEST(Comm, SplitReversedKeys) {
  Owned rev;
  ASSERT_EQ(braid_comm_split(world(), 7, -rank(), &rev.c), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(braid_comm_rank(rev.c), size() - 1 - rank());
  std::vector<int64_t> expected(static_cast<size_t>(size()));
  for (int r = 0; r < size(); ++r) expected[static_cast<size_t>(r)] = size() - 1 - r;
  EXPECT_EQ(world_ranks_of(rev.c), expected);
}

TEST(Comm, SplitEqualKeysKeepParentOrder) {
  Owned same;
  ASSERT_EQ(braid_comm_split(world(), 0, 5, &same.c), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(braid_comm_rank(same.c), rank());
}

TEST(Comm, UndefinedColorGivesNull) {
  // Rank 0 joins nothing; the others form one communicator without it.
  Owned rest;
  const int color = rank() == 0 ? BRAID_UNDEFINED : 1;
  rest.c = world();  // overwritten: NULL for rank 0
  ASSERT_EQ(braid_comm_split(world(), color, 0, &rest.c), BRAID_SUCCESS) << braid_last_error();
  if (rank() == 0) {
    EXPECT_EQ(rest.c, nullptr);
    return;
  }
  ASSERT_NE(rest.c, nullptr);
  EXPECT_EQ(braid_comm_size(rest.c), size() - 1);
  EXPECT_EQ(braid_comm_rank(rest.c), rank() - 1);
  int32_t x = 1;
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, rest.c), BRAID_SUCCESS);
  EXPECT_EQ(x, size() - 1);
}

TEST(Comm, NegativeColorIsRefusedAndTheParentStaysUsable) {
  braid_comm_t out = world();
  // Every rank passes the bad color.
  EXPECT_EQ(braid_comm_split(world(), -3, 0, &out), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(std::string(braid_last_error()).find("color -3"), std::string::npos)
      << braid_last_error();
  // Only the last rank does: every rank is told which, and the parent's calls stay in step.
  const int last = size() - 1;
  out = world();
  EXPECT_EQ(braid_comm_split(world(), rank() == last ? -5 : 1, 0, &out),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(
      std::string(braid_last_error())
          .find(rank() == last ? "color -5" : "rank " + std::to_string(last) + " passed color -5"),
      std::string::npos)
      << braid_last_error();
  EXPECT_EQ(braid_comm_split(world(), 0, 0, nullptr), BRAID_ERR_INVALID_ARGUMENT);
  int32_t x = 2;
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS);
  EXPECT_EQ(x, 2 * size());
}

TEST(Comm, NestedSplits) {
  // World -> halves by rank / 2 blocks of 2... then each block split again by parity of the
  // child rank: a communicator of one rank each.
  Owned pairs, single;
  ASSERT_EQ(braid_comm_split(world(), rank() / 2, 0, &pairs.c), BRAID_SUCCESS);
  const int pr = braid_comm_rank(pairs.c);
  EXPECT_EQ(pr, rank() % 2);
  ASSERT_EQ(braid_comm_split(pairs.c, pr, 0, &single.c), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(braid_comm_size(single.c), 1);
  EXPECT_EQ(braid_comm_rank(single.c), 0);
  float f[4] = {1, 2, 3, 4}, out[4] = {};
  ASSERT_EQ(braid_allreduce(f, out, 4, BRAID_FLOAT32, BRAID_SUM, single.c), BRAID_SUCCESS);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], f[i]);
  // The pair still works after its child was made.
  std::vector<int64_t> expected;
  for (int r = rank() / 2 * 2; r < std::min(size(), rank() / 2 * 2 + 2); ++r) expected.push_back(r);
  EXPECT_EQ(world_ranks_of(pairs.c), expected);
}

TEST(Comm, DupKeepsOrderAndSeparatesMessages) {
  Owned dup;
  ASSERT_EQ(braid_comm_dup(world(), &dup.c), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(braid_comm_rank(dup.c), rank());
  EXPECT_EQ(braid_comm_size(dup.c), size());
  // The same call on both at once, with different data: were their messages to match each
  // other's, the sums would mix.
  std::vector<int64_t> a(20000, rank() + 1), b(20000, 1000 * (rank() + 1));
  braid_request_t ra = nullptr, rb = nullptr;
  ASSERT_EQ(braid_iallreduce(a.data(), a.data(), a.size(), BRAID_INT64, BRAID_SUM, world(), &ra),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_iallreduce(b.data(), b.data(), b.size(), BRAID_INT64, BRAID_SUM, dup.c, &rb),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_wait(&rb), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_wait(&ra), BRAID_SUCCESS) << braid_last_error();
  const int64_t s = static_cast<int64_t>(size()) * (size() + 1) / 2;
  for (size_t i = 0; i < a.size(); i += 97) {
    ASSERT_EQ(a[i], s);
    ASSERT_EQ(b[i], 1000 * s);
  }
}

TEST(Comm, CollectivesInFlightOnParentAndChild) {
  Owned half;
  ASSERT_EQ(braid_comm_split(world(), rank() % 2, rank(), &half.c), BRAID_SUCCESS);
  // A non-blocking broadcast on the world stays in flight while the child runs blocking calls:
  // waiting on the child must keep the world's collective moving for the other ranks.
  std::vector<double> big(300000, rank() == 0 ? 3.5 : 0.0);
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_ibroadcast(big.data(), big.size(), BRAID_FLOAT64, 0, world(), &req),
            BRAID_SUCCESS);
  for (int k = 0; k < 5; ++k) {
    int32_t x = rank();
    ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_MAX, half.c), BRAID_SUCCESS)
        << braid_last_error();
    const int last = (size() - 1) % 2 == rank() % 2 ? size() - 1 : size() - 2;
    EXPECT_EQ(x, last);
  }
  ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  for (size_t i = 0; i < big.size(); i += 1009) ASSERT_EQ(big[i], 3.5);
}

TEST(Comm, FreeRules) {
  braid_comm_t w = world();
  EXPECT_EQ(braid_comm_free(&w), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("world"), std::string::npos);
  EXPECT_EQ(w, world());
  EXPECT_EQ(braid_comm_free(nullptr), BRAID_ERR_INVALID_ARGUMENT);

  braid_comm_t dup = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &dup), BRAID_SUCCESS);
  std::vector<int32_t> v(1000, 1);
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_iallreduce(v.data(), v.data(), v.size(), BRAID_INT32, BRAID_SUM, dup, &req),
            BRAID_SUCCESS);
  EXPECT_EQ(braid_comm_free(&dup), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("non-blocking"), std::string::npos)
      << braid_last_error();
  EXPECT_NE(dup, nullptr);
  ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(v[0], size());
  braid_comm_t stale = dup;
  ASSERT_EQ(braid_comm_free(&dup), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(dup, nullptr);
  // The freed handle is recognised, not used.
  EXPECT_EQ(braid_comm_size(stale), -1);
  EXPECT_EQ(braid_barrier(stale), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_comm_free(&stale), BRAID_ERR_INVALID_ARGUMENT);
  // Nor is it handed to the next communicator, which the stale copy would then reach.
  Owned next;
  ASSERT_EQ(braid_comm_split(world(), 0, -rank(), &next.c), BRAID_SUCCESS) << braid_last_error();
  EXPECT_NE(next.c, stale);
  EXPECT_EQ(braid_comm_size(stale), -1);
  EXPECT_EQ(braid_barrier(stale), BRAID_ERR_INVALID_ARGUMENT);
}

// A mismatch is told to every rank under the call's context id and number. Context ids are
// given again once freed, and children of one split with different colors share theirs: the
// notice must fail only the call it is about, not another communicator's call with that
// context and number.
int32_t mismatched_allreduce(braid_comm_t c) {
  int32_t v[2] = {1, 1};
  return braid_allreduce(v, v, braid_comm_rank(c) == 0 ? 1 : 2, BRAID_INT32, BRAID_SUM, c);
}

TEST(Comm, AMismatchIsNotHeldAgainstTheNextCommunicatorWithItsContext) {
  if (size() < 2) GTEST_SKIP() << "a mismatch needs two ranks";
  braid_comm_t c = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &c), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(mismatched_allreduce(c), BRAID_ERR_MISMATCH) << braid_last_error();
  ASSERT_EQ(braid_comm_free(&c), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS) << braid_last_error();
  // Call #0 of a new dup, with rank 0's side of the failed call (1 element of 1): its
  // message, unmatched over the transport, must not be taken for this call's.
  Owned again;
  ASSERT_EQ(braid_comm_dup(world(), &again.c), BRAID_SUCCESS) << braid_last_error();
  int32_t x = 10 + rank();
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, again.c), BRAID_SUCCESS)
      << braid_last_error();
  EXPECT_EQ(x, 10 * size() + size() * (size() - 1) / 2);
}

TEST(Comm, AMismatchInOneChildIsNotHeldAgainstItsSiblings) {
  if (size() < 4) GTEST_SKIP() << "two children of two ranks each";
  Owned pair;  // {0, 1}, {2, 3}, ...: one context id for all of them
  ASSERT_EQ(braid_comm_split(world(), rank() / 2, rank(), &pair.c), BRAID_SUCCESS)
      << braid_last_error();
  if (rank() < 2) {
    EXPECT_EQ(mismatched_allreduce(pair.c), BRAID_ERR_MISMATCH) << braid_last_error();
  }
  // The notice about {0, 1}'s call #0 has reached every rank by now, or nearly.
  ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS) << braid_last_error();
  if (rank() < 2) return;
  int32_t x = rank();
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, pair.c), BRAID_SUCCESS)
      << braid_last_error();
  const int first = rank() / 2 * 2;
  EXPECT_EQ(x, braid_comm_size(pair.c) == 2 ? 2 * first + 1 : first);
}

TEST(Comm, CreateAndFreeInALoop) {
  // Context ids and node segments are given back: far more communicators than could live at
  // once if they were not (ASan checks that nothing leaks).
  for (int k = 0; k < 40; ++k) {
    braid_comm_t c = nullptr;
    if (k % 2 == 0) {
      ASSERT_EQ(braid_comm_dup(world(), &c), BRAID_SUCCESS) << braid_last_error();
    } else {
      ASSERT_EQ(braid_comm_split(world(), rank() % 2, -rank(), &c), BRAID_SUCCESS)
          << braid_last_error();
    }
    int32_t x = k;
    ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, c), BRAID_SUCCESS)
        << braid_last_error();
    EXPECT_EQ(x, k * braid_comm_size(c));
    ASSERT_EQ(braid_comm_free(&c), BRAID_SUCCESS) << braid_last_error();
  }
}

uint64_t node_path(braid_comm_t c) {
  return braid::Comm(c).counters()["intranode_path"];
}

TEST(Comm, LiveCommunicatorsShareTheNodeSegment) {
  // A child takes a region of the node segment braid_init set up (node/node_pool.hpp): many
  // live at once, a dup has the node-local path wherever the world has it, and the regions
  // come back for the next ones, whatever order they are freed in.
  const uint64_t world_path = node_path(world());
  if (shm_selected("BRAID_ALLREDUCE_ALGO")) {
    EXPECT_EQ(world_path, 1u);
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<braid_comm_t> live(10, nullptr);
    for (size_t i = 0; i < live.size(); ++i) {
      if (i % 3 == 2) {
        ASSERT_EQ(braid_comm_split(world(), rank() % 2, rank(), &live[i]), BRAID_SUCCESS)
            << braid_last_error();
      } else {
        ASSERT_EQ(braid_comm_dup(world(), &live[i]), BRAID_SUCCESS) << braid_last_error();
        EXPECT_EQ(node_path(live[i]), world_path) << "dup " << i;
      }
    }
    // Every live communicator in turn, twice: their channels must not share any memory.
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < live.size(); ++i) {
        std::vector<int32_t> v(1000, static_cast<int32_t>(i) + rank());
        ASSERT_EQ(braid_allreduce(v.data(), v.data(), v.size(), BRAID_INT32, BRAID_SUM, live[i]),
                  BRAID_SUCCESS)
            << braid_last_error();
        const int n = braid_comm_size(live[i]);
        int32_t ranks_sum = 0;  // the world ranks in live[i]
        for (int r = 0; r < size(); ++r)
          if (i % 3 != 2 || r % 2 == rank() % 2) ranks_sum += r;
        EXPECT_EQ(v[999], static_cast<int32_t>(i) * n + ranks_sum) << "communicator " << i;
      }
    }
    if (round == 1) std::reverse(live.begin(), live.end());
    if (round == 2) std::rotate(live.begin(), live.begin() + 4, live.end());
    for (braid_comm_t &c : live)
      ASSERT_EQ(braid_comm_free(&c), BRAID_SUCCESS) << braid_last_error();
  }
}

TEST(Comm, MoreLiveCommunicatorsThanTheNodeSegmentHoldsStillWork) {
  // 128 regions (NodePool::kRegions), one of them the world's: the dups after the 127th go
  // without the node-local path (and say so in the log), and compute all the same; once freed,
  // the regions serve new communicators again.
  // Each region a dup uses takes 1 MiB per rank of the node and its control lines.
  if (size() > 2) GTEST_SKIP() << "2 ranks: 127 regions of 2 MiB";
  struct statvfs shm {};
  if (statvfs("/dev/shm", &shm) != 0 ||
      static_cast<uint64_t>(shm.f_bavail) * shm.f_frsize < (uint64_t{512} << 20))
    GTEST_SKIP() << "/dev/shm has less than 512 MiB free";
  const uint64_t world_path = node_path(world());
  std::vector<braid_comm_t> live(130, nullptr);
  int with_path = 0;
  for (size_t i = 0; i < live.size(); ++i) {
    ASSERT_EQ(braid_comm_dup(world(), &live[i]), BRAID_SUCCESS) << braid_last_error();
    with_path += static_cast<int>(node_path(live[i]));
    int32_t x = rank();
    ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, live[i]), BRAID_SUCCESS)
        << braid_last_error();
    EXPECT_EQ(x, size() * (size() - 1) / 2);
  }
  // Each rank counts its own node's regions: all of them if it shares the node, none if not.
  EXPECT_EQ(with_path, world_path == 1 ? 127 : 0);
  for (braid_comm_t &c : live) ASSERT_EQ(braid_comm_free(&c), BRAID_SUCCESS) << braid_last_error();
  braid_comm_t again = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &again), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(node_path(again), world_path);
  ASSERT_EQ(braid_comm_free(&again), BRAID_SUCCESS) << braid_last_error();
}

}  // namespace
}  // namespace mp
