// Communicators formed from a unique id, as a program with its own launcher forms them: here
// the world's rank 0 makes the id and broadcasts it over the world (as an MPI program would
// with MPI_Bcast); every rank then forms the group with braid_comm_init_rank and uses it.
#include <braid/braid.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

braid_unique_id_t shared_id(int from) {
  braid_unique_id_t id{};
  if (rank() == from) {
    EXPECT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  }
  EXPECT_EQ(braid_broadcast(&id, sizeof id, BRAID_UINT8, from, world()), BRAID_SUCCESS);
  return id;
}

TEST(Embed, GroupFromAUniqueIdRunsEveryCollective) {
  const braid_unique_id_t id = shared_id(0);
  // Ranks in reverse order: the group's numbering is the caller's, not the world's.
  const int mine = size() - 1 - rank();
  braid_comm_t g = nullptr;
  ASSERT_EQ(braid_comm_init_rank(&g, size(), id, mine), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(braid_comm_rank(g), mine);
  EXPECT_EQ(braid_comm_size(g), size());
  std::vector<int64_t> v(1000, mine + 1);
  ASSERT_EQ(braid_allreduce(v.data(), v.data(), v.size(), BRAID_INT64, BRAID_SUM, g), BRAID_SUCCESS)
      << braid_last_error();
  EXPECT_EQ(v[999], static_cast<int64_t>(size()) * (size() + 1) / 2);
  std::vector<int32_t> all(static_cast<size_t>(size()), -1);
  const int32_t me = mine;
  ASSERT_EQ(braid_allgather(&me, all.data(), 1, BRAID_INT32, g), BRAID_SUCCESS);
  for (int r = 0; r < size(); ++r) EXPECT_EQ(all[static_cast<size_t>(r)], r);
  // The rest of the set, in the group's numbering (its last rank as the root).
  const int last = size() - 1;
  const auto n = static_cast<size_t>(size());
  int32_t b = mine == last ? 77 : -1;
  ASSERT_EQ(braid_broadcast(&b, 1, BRAID_INT32, last, g), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(b, 77);
  int32_t red = -1;
  ASSERT_EQ(braid_reduce(&me, &red, 1, BRAID_INT32, BRAID_MAX, last, g), BRAID_SUCCESS);
  if (mine == last) {
    EXPECT_EQ(red, last);
  }
  std::vector<int32_t> blocks(n), got(n, -1);
  for (size_t r = 0; r < n; ++r) blocks[r] = me * 100 + static_cast<int32_t>(r);
  int32_t piece = -1;
  ASSERT_EQ(braid_reduce_scatter(blocks.data(), &piece, 1, BRAID_INT32, BRAID_SUM, g),
            BRAID_SUCCESS);
  EXPECT_EQ(piece, 100 * size() * (size() - 1) / 2 + size() * mine);
  ASSERT_EQ(braid_alltoall(blocks.data(), got.data(), 1, BRAID_INT32, g), BRAID_SUCCESS);
  for (size_t r = 0; r < n; ++r) EXPECT_EQ(got[r], static_cast<int32_t>(r) * 100 + mine);
  std::fill(got.begin(), got.end(), -1);
  ASSERT_EQ(braid_gather(&me, got.data(), 1, BRAID_INT32, last, g), BRAID_SUCCESS);
  if (mine == last) {
    for (size_t r = 0; r < n; ++r) EXPECT_EQ(got[r], static_cast<int32_t>(r));
  }
  ASSERT_EQ(braid_scatter(blocks.data(), &piece, 1, BRAID_INT32, last, g), BRAID_SUCCESS);
  EXPECT_EQ(piece, last * 100 + mine);
  // A split of it, and the world still works meanwhile.
  braid_comm_t half = nullptr;
  ASSERT_EQ(braid_comm_split(g, mine % 2, mine, &half), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_barrier(half), BRAID_SUCCESS);
  int32_t x = 1;
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS);
  EXPECT_EQ(x, size());
  // Freeing the group's communicator leaves the group, with what was split from it.
  braid_comm_t stale_half = half;
  ASSERT_EQ(braid_comm_free(&g), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(g, nullptr);
  EXPECT_EQ(braid_comm_size(stale_half), -1);
}

TEST(Embed, TwoIndependentGroupsInOneJob) {
  if (size() < 2) GTEST_SKIP() << "needs two groups";
  // Even and odd world ranks each form a group from their own id, made by their lowest rank.
  const braid_unique_id_t even = shared_id(0);
  const braid_unique_id_t odd = shared_id(1);
  const bool is_even = rank() % 2 == 0;
  const int members = is_even ? (size() + 1) / 2 : size() / 2;
  braid_comm_t g = nullptr;
  ASSERT_EQ(braid_comm_init_rank(&g, members, is_even ? even : odd, rank() / 2), BRAID_SUCCESS)
      << braid_last_error();
  int32_t x = rank();
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_MAX, g), BRAID_SUCCESS)
      << braid_last_error();
  const int last = is_even ? (size() - 1) / 2 * 2 : (size() - 2) / 2 * 2 + 1;
  EXPECT_EQ(x, last);
  ASSERT_EQ(braid_comm_free(&g), BRAID_SUCCESS) << braid_last_error();
}

TEST(Embed, OneProcessHoldsTwoGroupsAtOnce) {
  // Every rank joins two groups from two ids: one in the world's order, one reversed. A
  // non-blocking call stays in flight on each while blocking ones run on the other.
  const braid_unique_id_t id_a = shared_id(0);
  const braid_unique_id_t id_b = shared_id(size() - 1);
  const int rev = size() - 1 - rank();
  braid_comm_t a = nullptr, b = nullptr;
  ASSERT_EQ(braid_comm_init_rank(&a, size(), id_a, rank()), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_init_rank(&b, size(), id_b, rev), BRAID_SUCCESS) << braid_last_error();
  for (int round = 0; round < 3; ++round) {
    std::vector<int64_t> va(5000, rank() + 1), vb(5000, 1000 * (rev + 1));
    braid_request_t ra = nullptr;
    ASSERT_EQ(braid_iallreduce(va.data(), va.data(), va.size(), BRAID_INT64, BRAID_SUM, a, &ra),
              BRAID_SUCCESS)
        << braid_last_error();
    ASSERT_EQ(braid_allreduce(vb.data(), vb.data(), vb.size(), BRAID_INT64, BRAID_SUM, b),
              BRAID_SUCCESS)
        << braid_last_error();
    ASSERT_EQ(braid_wait(&ra), BRAID_SUCCESS) << braid_last_error();
    const int64_t s = static_cast<int64_t>(size()) * (size() + 1) / 2;
    EXPECT_EQ(va[4999], s);
    EXPECT_EQ(vb[4999], 1000 * s);
    // Ranks are each group's own: b's rank 0 is the world's last.
    int32_t from_a = rank() == 0 ? 11 : -1, from_b = rev == 0 ? 22 : -1;
    braid_request_t rb = nullptr;
    ASSERT_EQ(braid_ibroadcast(&from_b, 1, BRAID_INT32, 0, b, &rb), BRAID_SUCCESS);
    ASSERT_EQ(braid_broadcast(&from_a, 1, BRAID_INT32, 0, a), BRAID_SUCCESS);
    ASSERT_EQ(braid_wait(&rb), BRAID_SUCCESS) << braid_last_error();
    EXPECT_EQ(from_a, 11);
    EXPECT_EQ(from_b, 22);
  }
  ASSERT_EQ(braid_comm_free(&a), BRAID_SUCCESS) << braid_last_error();
  int32_t x = 1;
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, b), BRAID_SUCCESS)
      << "the other group after the first left: " << braid_last_error();
  EXPECT_EQ(x, size());
  ASSERT_EQ(braid_comm_free(&b), BRAID_SUCCESS) << braid_last_error();
}

// Freeing a group frees what was split from it: not while one of those has a request open,
// which would be left without a communicator to complete on.
TEST(Embed, AGroupIsNotFreedUnderAChildsOpenRequest) {
  const braid_unique_id_t id = shared_id(0);
  braid_comm_t g = nullptr, child = nullptr;
  ASSERT_EQ(braid_comm_init_rank(&g, size(), id, rank()), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_dup(g, &child), BRAID_SUCCESS) << braid_last_error();
  std::vector<int32_t> v(1000, 1);
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_iallreduce(v.data(), v.data(), v.size(), BRAID_INT32, BRAID_SUM, child, &req),
            BRAID_SUCCESS)
      << braid_last_error();
  braid_comm_t handle = g;
  EXPECT_EQ(braid_comm_free(&handle), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("split from this group"), std::string::npos)
      << braid_last_error();
  EXPECT_EQ(handle, g);
  ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(v[999], size());
  ASSERT_EQ(braid_comm_free(&g), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(braid_comm_size(child), -1);  // went with the group
}

// Two groups over the same processes are process contexts of their own: rank 0 leaves a call
// in flight on the first and blocks in the second, the others the other way round. Each
// blocking call needs the other side's non-blocking one, which only moves if a wait in one
// group progresses the other group's calls too.
TEST(Embed, AWaitInOneGroupProgressesTheOther) {
  if (size() < 2) GTEST_SKIP() << "needs a peer";
  const braid_unique_id_t id1 = shared_id(0), id2 = shared_id(0);
  braid_comm_t g1 = nullptr, g2 = nullptr;
  ASSERT_EQ(braid_comm_init_rank(&g1, size(), id1, rank()), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_init_rank(&g2, size(), id2, rank()), BRAID_SUCCESS) << braid_last_error();
  std::vector<int64_t> v1(1 << 17, rank() + 1), v2(1 << 17, 10 * (rank() + 1));
  const bool zero = rank() == 0;
  std::vector<int64_t> &mine_first = zero ? v1 : v2, &mine_second = zero ? v2 : v1;
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_iallreduce(mine_first.data(), mine_first.data(), mine_first.size(), BRAID_INT64,
                             BRAID_SUM, zero ? g1 : g2, &req),
            BRAID_SUCCESS)
      << braid_last_error();
  ASSERT_EQ(braid_allreduce(mine_second.data(), mine_second.data(), mine_second.size(), BRAID_INT64,
                            BRAID_SUM, zero ? g2 : g1),
            BRAID_SUCCESS)
      << braid_last_error();
  ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  const int64_t s = static_cast<int64_t>(size()) * (size() + 1) / 2;
  EXPECT_EQ(v1.back(), s);
  EXPECT_EQ(v2.back(), 10 * s);
  ASSERT_EQ(braid_comm_free(&g1), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_free(&g2), BRAID_SUCCESS) << braid_last_error();
}

TEST(Embed, ForgedIdsAndBadArgumentsAreRefusedAtOnce) {
  braid_unique_id_t id{};
  ASSERT_EQ(braid_get_unique_id(&id), BRAID_SUCCESS) << braid_last_error();
  braid_comm_t g = world();
  braid_unique_id_t forged = id;
  forged.internal[20] ^= 1;
  EXPECT_EQ(braid_comm_init_rank(&g, 2, forged, 1), BRAID_ERR_BOOTSTRAP);
  EXPECT_EQ(g, nullptr);
  EXPECT_NE(std::string(braid_last_error()).find("not one braid_get_unique_id made"),
            std::string::npos)
      << braid_last_error();
  braid_unique_id_t zeros{};
  EXPECT_EQ(braid_comm_init_rank(&g, 2, zeros, 0), BRAID_ERR_BOOTSTRAP);
  // A forger who also recomputes the checksum (FNV-1a of the 120 bytes before it) over an
  // address that is no address.
  braid_unique_id_t resummed = id;
  const char bogus[] = "nonsense";
  resummed.internal[41] = static_cast<char>(sizeof bogus - 1);
  std::memcpy(resummed.internal + 42, bogus, sizeof bogus - 1);
  uint64_t sum = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < 120; ++i)
    sum = (sum ^ static_cast<unsigned char>(resummed.internal[i])) * 0x100000001b3ull;
  std::memcpy(resummed.internal + 120, &sum, sizeof sum);
  EXPECT_EQ(braid_comm_init_rank(&g, 2, resummed, 1), BRAID_ERR_BOOTSTRAP);
  EXPECT_NE(std::string(braid_last_error()).find("'nonsense' is not host:port"), std::string::npos)
      << braid_last_error();
  EXPECT_EQ(braid_comm_init_rank(&g, 0, id, 0), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_comm_init_rank(&g, 2, id, 2), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("rank 2 is out of range"), std::string::npos);
  EXPECT_EQ(braid_comm_init_rank(nullptr, 2, id, 0), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_get_unique_id(nullptr), BRAID_ERR_INVALID_ARGUMENT);
  // A group of one needs nobody else.
  ASSERT_EQ(braid_comm_init_rank(&g, 1, id, 0), BRAID_SUCCESS) << braid_last_error();
  double d = 2.5;
  ASSERT_EQ(braid_allreduce(&d, &d, 1, BRAID_FLOAT64, BRAID_SUM, g), BRAID_SUCCESS);
  EXPECT_EQ(d, 2.5);
  ASSERT_EQ(braid_comm_free(&g), BRAID_SUCCESS);
}

TEST(Embed, CppFormsAGroupThatLeavesWithItsLastCopy) {
  braid_unique_id_t id{};
  if (rank() == 0) id = braid::unique_id();
  ASSERT_EQ(braid_broadcast(&id, sizeof id, BRAID_UINT8, 0, world()), BRAID_SUCCESS);
  braid::Comm g = braid::Comm::from_unique_id(id, size(), rank());
  std::vector<int32_t> v(10, 1);
  g.allreduce(v, braid::Op::sum);
  EXPECT_EQ(v[0], size());
  braid::Comm copy = g;
  g.free();  // leaves the group now; the copy is invalid with it
  EXPECT_EQ(copy.size(), -1);
}

}  // namespace
}  // namespace mp
