// Non-blocking collectives: several in flight at once on one communicator, completed in a
// different order than they were started, by braid_wait and by polling braid_test.
#include <cstdint>
#include <numeric>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

TEST(NonBlocking, ManyInFlightCompleteInAnyOrder) {
  const int n = size();
  const std::vector<size_t> counts = {1, 100, 5000, 70000, 400000, 3};
  std::vector<std::vector<int32_t>> bufs;
  std::vector<braid_request_t> reqs(counts.size() + 2, nullptr);
  for (size_t k = 0; k < counts.size(); ++k) {
    bufs.emplace_back(counts[k]);
    for (size_t i = 0; i < counts[k]; ++i)
      bufs[k][i] =
          static_cast<int32_t>(rank() * 1000 + static_cast<int>(i % 1000) + static_cast<int>(k));
    ASSERT_EQ(braid_iallreduce(bufs[k].data(), bufs[k].data(), counts[k], BRAID_INT32, BRAID_SUM,
                               world(), &reqs[k]),
              BRAID_SUCCESS)
        << braid_last_error();
  }
  std::vector<double> bc(200000, rank() == n - 1 ? 2.5 : -1.0);
  ASSERT_EQ(
      braid_ibroadcast(bc.data(), bc.size(), BRAID_FLOAT64, n - 1, world(), &reqs[counts.size()]),
      BRAID_SUCCESS);
  std::vector<uint8_t> small(9, static_cast<uint8_t>(rank()));
  ASSERT_EQ(braid_iallreduce(small.data(), small.data(), small.size(), BRAID_UINT8, BRAID_MAX,
                             world(), &reqs[counts.size() + 1]),
            BRAID_SUCCESS);

  // Complete the last-started first; poll one of them with braid_test.
  for (size_t k = reqs.size(); k-- > 0;) {
    if (k == 2) {
      int done = 0;
      while (!done) ASSERT_EQ(braid_test(&reqs[k], &done), BRAID_SUCCESS) << braid_last_error();
    } else {
      ASSERT_EQ(braid_wait(&reqs[k]), BRAID_SUCCESS) << braid_last_error();
    }
    EXPECT_EQ(reqs[k], nullptr);
  }
  const int32_t rank_sum = 1000 * n * (n - 1) / 2;
  for (size_t k = 0; k < counts.size(); ++k)
    for (size_t i = 0; i < counts[k]; i += 7)
      ASSERT_EQ(bufs[k][i], rank_sum + n * (static_cast<int>(i % 1000) + static_cast<int>(k)))
          << "request " << k << " element " << i;
  for (double x : bc) ASSERT_EQ(x, 2.5);
  for (uint8_t x : small) ASSERT_EQ(x, n - 1);
}

// More calls in flight than the tags have sequence numbers for (1024 with UCX's tags): a call
// that far ahead waits for the oldest, so two calls in flight never share a tag. Completed
// newest first, each with its own values.
TEST(NonBlocking, MoreInFlightThanTheTagsHaveSequenceNumbers) {
  constexpr int kCalls = 1100;
  std::vector<int32_t> values(kCalls);
  std::vector<braid_request_t> reqs(kCalls, nullptr);
  for (int k = 0; k < kCalls; ++k) {
    values[static_cast<size_t>(k)] = rank() * 10000 + k;
    ASSERT_EQ(braid_iallreduce(&values[static_cast<size_t>(k)], &values[static_cast<size_t>(k)], 1,
                               BRAID_INT32, BRAID_SUM, world(), &reqs[static_cast<size_t>(k)]),
              BRAID_SUCCESS)
        << "call " << k << ": " << braid_last_error();
  }
  for (int k = kCalls; k-- > 0;)
    ASSERT_EQ(braid_wait(&reqs[static_cast<size_t>(k)]), BRAID_SUCCESS) << braid_last_error();
  const int n = size();
  for (int k = 0; k < kCalls; ++k)
    EXPECT_EQ(values[static_cast<size_t>(k)], 10000 * (n * (n - 1) / 2) + n * k) << "call " << k;
}

// A non-blocking call held back that far ahead still returns at once: rank 0 starts 600 on one
// communicator and then waits in a barrier of another, which the others enter before they start
// theirs (had the 513th call waited for the first, every rank would have waited for the other).
TEST(NonBlocking, ACallHeldBackReturnsAtOnce) {
  if (size() < 2) GTEST_SKIP() << "needs a peer";
  constexpr int kCalls = 600;
  braid_comm_t a = nullptr, b = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &a), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_dup(world(), &b), BRAID_SUCCESS) << braid_last_error();
  std::vector<braid_request_t> reqs(kCalls, nullptr);
  auto start_all = [&] {
    for (auto &r : reqs) ASSERT_EQ(braid_ibarrier(a, &r), BRAID_SUCCESS) << braid_last_error();
  };
  if (rank() == 0) start_all();
  ASSERT_EQ(braid_barrier(b), BRAID_SUCCESS) << braid_last_error();
  if (rank() != 0) start_all();
  for (auto &r : reqs) ASSERT_EQ(braid_wait(&r), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_free(&a), BRAID_SUCCESS);
  ASSERT_EQ(braid_comm_free(&b), BRAID_SUCCESS);
}

TEST(NonBlocking, OverlapsWithBlockingCalls) {
  std::vector<float> a(300000, 1.0f), b(1000, 2.0f);
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_iallreduce(a.data(), a.data(), a.size(), BRAID_FLOAT32, BRAID_SUM, world(), &req),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_allreduce(b.data(), b.data(), b.size(), BRAID_FLOAT32, BRAID_SUM, world()),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS);
  ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  EXPECT_EQ(a.front(), static_cast<float>(size()));
  EXPECT_EQ(a.back(), static_cast<float>(size()));
  EXPECT_EQ(b[500], 2.0f * static_cast<float>(size()));
}

// Rank 0 starts a call on B, then one on A, and polls braid_test on A only; the others make
// blocking calls on B, then on A (each communicator sees one order: a valid program). They
// wait in B for rank 0's part, which only moves while rank 0 polls A: polling must progress
// the other communicators as a wait does.
TEST(NonBlocking, PollingOneRequestProgressesTheOtherCommunicators) {
  if (size() < 2) GTEST_SKIP() << "needs a peer";
  braid_comm_t a = nullptr, b = nullptr;
  ASSERT_EQ(braid_comm_dup(world(), &a), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_comm_dup(world(), &b), BRAID_SUCCESS) << braid_last_error();
  const size_t n = size_t{1} << 18;
  std::vector<int64_t> in_a(n), out_a(n), in_b(n), out_b(n);
  for (size_t i = 0; i < n; ++i) {
    in_a[i] = rank() + static_cast<int64_t>(i);
    in_b[i] = 2 * rank() + static_cast<int64_t>(i);
  }
  if (rank() == 0) {
    braid_request_t qa = nullptr, qb = nullptr;
    ASSERT_EQ(braid_iallreduce(in_b.data(), out_b.data(), n, BRAID_INT64, BRAID_SUM, b, &qb),
              BRAID_SUCCESS);
    ASSERT_EQ(braid_iallreduce(in_a.data(), out_a.data(), n, BRAID_INT64, BRAID_SUM, a, &qa),
              BRAID_SUCCESS);
    int done = 0;
    while (done == 0) ASSERT_EQ(braid_test(&qa, &done), BRAID_SUCCESS) << braid_last_error();
    ASSERT_EQ(braid_wait(&qb), BRAID_SUCCESS) << braid_last_error();
  } else {
    ASSERT_EQ(braid_allreduce(in_b.data(), out_b.data(), n, BRAID_INT64, BRAID_SUM, b),
              BRAID_SUCCESS)
        << braid_last_error();
    ASSERT_EQ(braid_allreduce(in_a.data(), out_a.data(), n, BRAID_INT64, BRAID_SUM, a),
              BRAID_SUCCESS)
        << braid_last_error();
  }
  const int64_t p = size(), ranks_sum = p * (p - 1) / 2;
  for (size_t i = 0; i < n; i += 997) {
    ASSERT_EQ(out_a[i], ranks_sum + p * static_cast<int64_t>(i)) << i;
    ASSERT_EQ(out_b[i], 2 * ranks_sum + p * static_cast<int64_t>(i)) << i;
  }
  ASSERT_EQ(braid_comm_free(&a), BRAID_SUCCESS);
  ASSERT_EQ(braid_comm_free(&b), BRAID_SUCCESS);
}

TEST(NonBlocking, CountZeroCompletesAtOnce) {
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_iallreduce(nullptr, nullptr, 0, BRAID_INT8, BRAID_SUM, world(), &req),
            BRAID_SUCCESS);
  ASSERT_NE(req, nullptr);
  int done = 0;
  ASSERT_EQ(braid_test(&req, &done), BRAID_SUCCESS);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(req, nullptr);
}

// A refused call leaves *req NULL, not whatever the caller's variable held: a program that
// waits on it anyway gets INVALID_ARGUMENT, not a wild pointer. Refused on every rank alike, so
// the communicator stays in step.
TEST(NonBlocking, ARefusedCallSetsTheRequestToNull) {
  int32_t a = 1, b = 0;
  auto *junk = reinterpret_cast<braid_request_t>(uintptr_t{0x10});
  braid_request_t req = junk;
  EXPECT_EQ(braid_iallgather(&a, &b, 1, static_cast<braid_dtype_t>(99), world(), &req),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(req, nullptr);
  req = junk;
  EXPECT_EQ(braid_iallreduce(&a, &b, 1, BRAID_FLOAT32, BRAID_BAND, world(), &req),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(req, nullptr);
  req = junk;
  EXPECT_EQ(braid_ibroadcast(&a, 1, BRAID_INT32, size(), world(), &req),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(req, nullptr);
  EXPECT_EQ(braid_wait(&req), BRAID_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(braid_allreduce(&a, &b, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS);
  EXPECT_EQ(b, size());
}

}  // namespace
}  // namespace mp
