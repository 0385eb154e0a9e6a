// Bad input fails at once on the calling rank with BRAID_ERR_INVALID_ARGUMENT and a message that
// names the problem, and the communicator stays usable afterwards.
#include <cstdint>
#include <string>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

void expect_invalid(braid_result_t rc, const std::string &mentions) {
  EXPECT_EQ(rc, BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find(mentions), std::string::npos)
      << "message was: " << braid_last_error();
}

void expect_still_usable() {
  int v = 1;
  ASSERT_EQ(braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS)
      << braid_last_error();
  EXPECT_EQ(v, size());
}

TEST(Errors, UnknownDtypeAndOp) {
  float x[4] = {1, 2, 3, 4};
  expect_invalid(braid_allreduce(x, x, 4, static_cast<braid_dtype_t>(42), BRAID_SUM, world()),
                 "unknown dtype 42");
  expect_invalid(braid_allreduce(x, x, 4, BRAID_FLOAT32, static_cast<braid_op_t>(-1), world()),
                 "unknown op -1");
  expect_invalid(braid_broadcast(x, 4, static_cast<braid_dtype_t>(-3), 0, world()),
                 "unknown dtype -3");
  expect_still_usable();
}

TEST(Errors, RootOutOfRange) {
  int x = 0;
  expect_invalid(braid_broadcast(&x, 1, BRAID_INT32, size(), world()),
                 "root " + std::to_string(size()) + " is out of range");
  expect_invalid(braid_broadcast(&x, 1, BRAID_INT32, -1, world()), "root -1 is out of range");
  braid_request_t req = nullptr;
  expect_invalid(braid_ibroadcast(&x, 1, BRAID_INT32, 1000, world(), &req), "root 1000");
  EXPECT_EQ(req, nullptr);
  expect_still_usable();
}

TEST(Errors, NullBufferWithElements) {
  float x = 0;
  expect_invalid(braid_allreduce(nullptr, &x, 1, BRAID_FLOAT32, BRAID_SUM, world()),
                 "sendbuf is NULL with count 1");
  expect_invalid(braid_allreduce(&x, nullptr, 1, BRAID_FLOAT32, BRAID_SUM, world()),
                 "recvbuf is NULL");
  expect_invalid(braid_broadcast(nullptr, 5, BRAID_FLOAT32, 0, world()), "buf is NULL");
  expect_still_usable();
}

TEST(Errors, OverlappingBuffersAndBadHandles) {
  std::vector<int32_t> v(16, 1);
  expect_invalid(braid_allreduce(v.data(), v.data() + 1, 8, BRAID_INT32, BRAID_SUM, world()),
                 "overlap");
  expect_invalid(braid_allreduce(v.data(), v.data(), 1, BRAID_INT32, BRAID_SUM, nullptr),
                 "communicator is NULL");
  expect_invalid(braid_iallreduce(v.data(), v.data(), 1, BRAID_INT32, BRAID_SUM, world(), nullptr),
                 "req is NULL");
  expect_invalid(braid_wait(nullptr), "NULL request");
  EXPECT_EQ(braid_comm_rank(nullptr), -1);
  EXPECT_EQ(braid_comm_size(nullptr), -1);
  expect_still_usable();
}

// What a rank sends itself must be what it receives from itself: its own mistake, refused on
// the calling rank at any size (a one-rank communicator too, which has no peer to disagree).
TEST(Errors, AlltoallvSelfCountsThatDifferAreRefused) {
  const auto n = static_cast<size_t>(size());
  const auto me = static_cast<size_t>(rank());
  std::vector<size_t> sendcounts(n, 1), recvcounts(n, 1), displs(n);
  for (size_t r = 0; r < n; ++r) displs[r] = 2 * r;
  sendcounts[me] = 2;
  std::vector<int32_t> in(2 * n), out(2 * n);
  expect_invalid(braid_alltoallv(in.data(), sendcounts.data(), displs.data(), out.data(),
                                 recvcounts.data(), displs.data(), BRAID_INT32, world()),
                 "sendcounts[" + std::to_string(rank()) + "] is 2 but recvcounts[" +
                     std::to_string(rank()) + "] is 1");
  expect_still_usable();
}

// Receive blocks that overlap would be written by two peers, in an order that differs between
// ranks: refused, naming both blocks (every rank passes the same arrays here). Gaps, blocks in
// any order and empty blocks at one place are fine.
TEST(Errors, OverlappingReceiveBlocksAreRefused) {
  if (size() < 2) GTEST_SKIP() << "one block cannot overlap another";
  const auto n = static_cast<size_t>(size());
  std::vector<size_t> counts(n, 2), displs(n), sdispls(n);
  for (size_t r = 0; r < n; ++r) {
    displs[r] = 3 * (n - 1 - r);  // backwards, with gaps
    sdispls[r] = 2 * r;
  }
  displs[1] = displs[0] + 1;  // block 1 starts inside block 0
  std::vector<int32_t> in(2 * n, 1), out(3 * n + 2, 0);
  const std::string d0 = std::to_string(displs[0]), d1 = std::to_string(displs[1]);
  expect_invalid(braid_allgatherv(in.data(), 2, out.data(), counts.data(), displs.data(),
                                  BRAID_INT32, world()),
                 "allgatherv: receive blocks 0 (displacement " + d0 +
                     ", count 2) and 1 (displacement " + d1 + ", count 2) overlap");
  expect_invalid(braid_alltoallv(in.data(), counts.data(), sdispls.data(), out.data(),
                                 counts.data(), displs.data(), BRAID_INT32, world()),
                 "overlap");
  expect_still_usable();
  // The same places with block 1 empty: nothing overlaps.
  counts[1] = 0;
  std::vector<size_t> sendcounts(n, 2);
  sendcounts[1] = 0;
  const size_t mine = counts[static_cast<size_t>(rank())];
  ASSERT_EQ(braid_allgatherv(in.data(), mine, out.data(), counts.data(), displs.data(), BRAID_INT32,
                             world()),
            BRAID_SUCCESS)
      << braid_last_error();
  expect_still_usable();
}

// A count that fits in size_t but, from where the buffer starts, not in the address space: the
// same on every rank, so every rank refuses it.
TEST(Errors, BufferPastTheEndOfTheAddressSpace) {
  std::vector<uint16_t> v(64);
  const size_t huge = SIZE_MAX / 2;  // SIZE_MAX - 1 bytes of uint16
  expect_invalid(braid_allreduce(v.data(), v.data(), huge, BRAID_UINT16, BRAID_SUM, world()),
                 "runs past the end of the address space");
  expect_invalid(braid_broadcast(v.data(), huge, BRAID_UINT16, 0, world()),
                 "runs past the end of the address space");
  // size() blocks of uint16 still fit in size_t, not after v.data().
  expect_invalid(
      braid_alltoall(v.data(), v.data(), huge / static_cast<size_t>(size()), BRAID_UINT16, world()),
      "runs past the end of the address space");
  expect_still_usable();
}

TEST(Errors, InitTwiceIsRefused) {
  braid_comm_t again = nullptr;
  expect_invalid(braid_init(nullptr, nullptr, &again), "braid_init called twice");
  EXPECT_EQ(again, nullptr);
  expect_still_usable();
}

TEST(Errors, StrerrorNamesEveryCode) {
  for (int c = BRAID_SUCCESS; c <= BRAID_ERR_INTERNAL; ++c)
    EXPECT_STRNE(braid_strerror(static_cast<braid_result_t>(c)), "unknown result code") << c;
}

}  // namespace
}  // namespace mp
