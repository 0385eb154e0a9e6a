// Reduce and reduce-scatter by single copy (collectives/intranode/direct_reduce.cpp): each rank
// reduces its share of the others' vectors read through CMA. As in single_copy_test.cpp, the
// results are checked in every variant of the suite and the counter under BRAID_CMA=on/off;
// on the node path the bits must be the rank-order fold, whichever path ran.
#include <braid/braid.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "rank_env.hpp"
#include "single_copy_checks.hpp"

namespace mp {
namespace {

// Reduce goes single copy from 64 KiB of vector (kReduceSingleCopyMinBytes), reduce-scatter
// from 256 KiB (kAllreduceSingleCopyMinBytes).
bool eligible(size_t vector_bytes, size_t floor_kib) {
  return vector_bytes >= (floor_kib << 10);
}

// The rank-order fold of every rank's floats_of(r, count), elements [first, first + n).
std::vector<float> fold(size_t count, size_t first, size_t n) {
  std::vector<float> want(n);
  const std::vector<float> x0 = floats_of(0, count);
  std::copy(x0.begin() + static_cast<long>(first), x0.begin() + static_cast<long>(first + n),
            want.begin());
  for (int r = 1; r < size(); ++r) {
    const std::vector<float> x = floats_of(r, count);
    for (size_t i = 0; i < n; ++i) want[i] = want[i] + x[first + i];
  }
  return want;
}

// On the node path (`shm`: shm_selected, which is collective, asked by every rank before)
// exactly the fold's bits; elsewhere (transport algorithms) close to it.
void expect_fold(const float *got, const std::vector<float> &want, bool shm,
                 const std::string &what) {
  if (shm) {
    ASSERT_EQ(std::memcmp(got, want.data(), want.size() * sizeof(float)), 0) << what;
    return;
  }
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * size()) << what << " at " << i;
}

TEST(SingleCopy, ReduceToEveryRootGivesTheRankOrderBits) {
  const bool shm = shm_selected("BRAID_REDUCE_ALGO");
  for (size_t count : {size_t{4099}, size_t{20011}, size_t{65537}, size_t{300001}}) {
    // Once per count: the fold takes every rank's inputs (ranks x count random draws).
    const std::vector<float> want = fold(count, 0, count);
    const std::vector<float> input = floats_of(rank(), count);
    for (int root = 0; root < size(); ++root)
      for (bool in_place : {false, true}) {
        const std::string what = "reduce of " + std::to_string(count) + " to " +
                                 std::to_string(root) + (in_place ? " in place" : "");
        const uint64_t before = single_copy_calls();
        constexpr int kCalls = 2;
        for (int call = 0; call < kCalls; ++call) {
          std::vector<float> send = input;
          std::vector<float> recv(rank() == root ? count : 0, 0.0f);
          float *out = rank() != root ? nullptr : in_place ? send.data() : recv.data();
          ASSERT_EQ(braid_reduce(send.data(), out, count, BRAID_FLOAT32, BRAID_SUM, root, world()),
                    BRAID_SUCCESS)
              << braid_last_error();
          if (rank() == root) expect_fold(out, want, shm, what);
        }
        check_count(single_copy_calls() - before, "BRAID_REDUCE_ALGO",
                    eligible(count * sizeof(float), 64) ? kCalls : 0, false, what);
      }
  }
}

// Integer ops, the average finished at the root once.
TEST(SingleCopy, ReduceIntegerOpsAreExact) {
  constexpr size_t kCount = 70000;  // 280 KB: single copy where offered
  const int root = size() - 1;
  for (braid_op_t op : {BRAID_MAX, BRAID_BXOR, BRAID_AVG}) {
    std::vector<int32_t> send(kCount), recv(kCount);
    for (size_t i = 0; i < kCount; ++i) send[i] = int_input(rank(), i);
    ASSERT_EQ(braid_reduce(send.data(), recv.data(), kCount, BRAID_INT32, op, root, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    if (rank() != root) continue;
    for (size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(recv[i], int_op_of_all(op, i)) << "op " << op_str(op) << " at " << i;
    }
  }
}

TEST(SingleCopy, ReduceScatterGivesTheRankOrderBits) {
  const bool shm = shm_selected("BRAID_REDUCE_SCATTER_ALGO");
  const auto n = static_cast<size_t>(size());
  for (size_t block : {size_t{1031}, size_t{16411}, size_t{65537}}) {
    const size_t count = block * n;
    const size_t mine = block * static_cast<size_t>(rank());
    const std::vector<float> want = fold(count, mine, block);
    const std::vector<float> input = floats_of(rank(), count);
    for (bool in_place : {false, true}) {
      const std::string what =
          "reduce_scatter of blocks of " + std::to_string(block) + (in_place ? " in place" : "");
      const uint64_t before = single_copy_calls();
      constexpr int kCalls = 2;
      for (int call = 0; call < kCalls; ++call) {
        std::vector<float> send = input, recv(block, 0.0f);
        float *out = in_place ? send.data() + mine : recv.data();
        ASSERT_EQ(braid_reduce_scatter(send.data(), out, block, BRAID_FLOAT32, BRAID_SUM, world()),
                  BRAID_SUCCESS)
            << braid_last_error();
        expect_fold(out, want, shm, what);
      }
      check_count(single_copy_calls() - before, "BRAID_REDUCE_SCATTER_ALGO",
                  eligible(count * sizeof(float), 256) ? kCalls : 0, false, what);
    }
  }
}

}  // namespace
}  // namespace mp
