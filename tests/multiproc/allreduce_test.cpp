// allreduce on every rank of the job: every dtype x op at sizes around the algorithm switch
// points (from 512 KiB the ops in turns), in place and out of place, exact results and
// identical bits on every rank.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "exact_allreduce.hpp"
#include "rank_env.hpp"

namespace mp {
namespace {

// Element counts that straddle the selection table's byte thresholds (16 KiB, 512 KiB), the
// ring's 1 MiB segments, and the small and awkward counts (fewer elements than ranks, primes).
// `large` adds the counts around 512 KiB, `big` one of 3 MiB.
std::vector<size_t> counts_for(braid_dtype_t dt, bool large, bool big) {
  const size_t es = elem_size(dt);
  std::vector<size_t> c = {1, 2, 3, 5, 8, 31, 1000, 4099};
  for (size_t edge : {size_t{16} << 10, size_t{512} << 10}) {
    if (edge > (size_t{16} << 10) && !large) break;
    c.push_back(edge / es - 1);
    c.push_back(edge / es);
    c.push_back(edge / es + 1);
  }
  if (big) c.push_back((size_t{3} << 20) / es + 7);
  return c;
}

// Every dtype x op up to the 16 KiB edge; from the 512 KiB edge on, each dtype with one op, the
// ops taking turns so that each meets integer and float dtypes, starting at the rank count so
// that the ctest variants' rank counts (1-5 and 8) give every dtype every op. Selection and the
// algorithms cut the vector by bytes, elements and ranks, never by op, and
// tests/unit/reduce_kernels_test.cpp checks the kernels for every dtype x op on empty,
// scalar-only, whole-block and block-plus-remainder counts. The full product at the
// large counts took about a quarter of every multiproc variant's time (each rank computes the
// expected sum of every rank's inputs), and under TCG in the rxe guests even more.
TEST(Allreduce, EveryDtypeAndOpIsExactAroundEverySwitchPoint) {
  size_t d = static_cast<size_t>(size());
  for (braid_dtype_t dt : kSweepDtypes) {
    for (size_t o = 0; o < std::size(kAllOps); ++o) {
      const braid_op_t op = kAllOps[o];
      const bool large = o == d % std::size(kAllOps);
      const bool big = large && (dt == BRAID_INT8 || dt == BRAID_FLOAT32 || dt == BRAID_BFLOAT16);
      for (size_t count : counts_for(dt, large, big)) {
        check_allreduce(dt, op, count, /*in_place=*/count % 2 == 0);
        if (HasFatalFailure()) return;
      }
    }
    ++d;
  }
}

TEST(Allreduce, SixteenBitIntegersWithEveryOp) {
  for (braid_dtype_t dt : {BRAID_INT16, BRAID_UINT16})
    for (braid_op_t op : kAllOps)
      for (size_t count : {size_t{1}, size_t{31}, size_t{8191}, size_t{8193}, size_t{300000}}) {
        check_allreduce(dt, op, count, /*in_place=*/count % 2 == 1);
        if (HasFatalFailure()) return;
      }
}

TEST(Allreduce, BitwiseAndLogicalOpsOnEveryIntegerDtype) {
  for (braid_dtype_t dt : kAllDtypes) {
    if (!is_integer(dt)) continue;
    for (braid_op_t op : kIntegerOps)
      for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, size_t{20000}}) {
        check_allreduce(dt, op, count, /*in_place=*/count % 2 == 0);
        if (HasFatalFailure()) return;
      }
  }
}

// The average: the sum divided by the rank count once, integers truncated toward zero.
void check_average(braid_dtype_t dt, size_t count) {
  const size_t es = elem_size(dt);
  const int n = size();
  const Share share = my_share(count);
  std::vector<unsigned char> in(count * es), out(count * es), expected(count * es);
  for (size_t i = 0; i < count; ++i) store(dt, in.data(), i, input_value(dt, BRAID_AVG, rank(), i));
  for (size_t i = share.first; i < share.last; ++i) {
    int64_t sum = 0;
    for (int r = 0; r < n; ++r) sum += input_value(dt, BRAID_AVG, r, i);
    if (dt == BRAID_FLOAT32) {
      const float q = static_cast<float>(sum) / static_cast<float>(n);
      std::memcpy(expected.data() + i * es, &q, es);
    } else if (dt == BRAID_FLOAT64) {
      const double q = static_cast<double>(sum) / n;
      std::memcpy(expected.data() + i * es, &q, es);
    } else {
      store(dt, expected.data(), i, sum / n);  // exact for 16-bit floats (see input_value)
    }
  }
  ASSERT_EQ(braid_allreduce(in.data(), out.data(), count, dt, BRAID_AVG, world()), BRAID_SUCCESS)
      << braid_last_error();
  expect_exact_on_every_rank(
      dt, out.data(), expected.data(), count, share,
      std::string("avg ") + dtype_str(dt) + " count " + std::to_string(count));
}

TEST(Allreduce, AverageOnEveryDtype) {
  for (braid_dtype_t dt : kAllDtypes)
    for (size_t count : {size_t{1}, size_t{33}, size_t{5000}, size_t{300000}}) {
      check_average(dt, count);
      if (HasFatalFailure()) return;
    }
}

TEST(Allreduce, BitwiseOpOnAFloatDtypeIsRefused) {
  float f[2] = {1, 2};
  for (braid_op_t op : kIntegerOps) {
    EXPECT_EQ(braid_allreduce(f, f, 2, BRAID_FLOAT32, op, world()), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(braid_last_error()).find("needs an integer dtype"), std::string::npos)
        << braid_last_error();
  }
  double d = 1;
  EXPECT_EQ(braid_reduce(&d, &d, 1, BRAID_FLOAT64, BRAID_BXOR, 0, world()),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_reduce_scatter(&d, &d, 1, BRAID_FLOAT64, BRAID_LOR, world()),
            BRAID_ERR_INVALID_ARGUMENT);
}

TEST(Allreduce, InPlaceAndOutOfPlaceAgree) {
  for (size_t count : {size_t{3}, size_t{5000}, size_t{300000}}) {
    check_allreduce(BRAID_FLOAT64, BRAID_SUM, count, true);
    check_allreduce(BRAID_FLOAT64, BRAID_SUM, count, false);
    check_allreduce(BRAID_INT32, BRAID_MIN, count, true);
    check_allreduce(BRAID_INT32, BRAID_MIN, count, false);
  }
}

TEST(Allreduce, CountZeroIsANoOp) {
  float x = 7.0f;
  ASSERT_EQ(braid_allreduce(&x, &x, 0, BRAID_FLOAT32, BRAID_SUM, world()), BRAID_SUCCESS);
  EXPECT_EQ(x, 7.0f);
  ASSERT_EQ(braid_allreduce(nullptr, nullptr, 0, BRAID_FLOAT32, BRAID_SUM, world()), BRAID_SUCCESS);
}

// Random floats make the result depend on the order of reduction; every rank must still hold
// the same bits, and the value must be close to the exact sum.
TEST(Allreduce, RandomFloatsGiveIdenticalBitsOnEveryRank) {
  for (size_t count : {size_t{7}, size_t{3000}, size_t{40000}, size_t{700000}}) {
    // Values spanning six decades, drawn in a fixed order so every rank can recompute them.
    auto next = [](std::mt19937 &g) {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      const float mantissa = dist(g);
      const int decade = static_cast<int>(g() % 7) - 3;
      return mantissa * std::pow(10.0f, static_cast<float>(decade));
    };
    std::mt19937 gen(1234u + static_cast<unsigned>(rank()));
    std::vector<float> v(count);
    for (float &x : v) x = next(gen);
    std::vector<double> exact(count, 0.0);
    for (int r = 0; r < size(); ++r) {
      std::mt19937 g(1234u + static_cast<unsigned>(r));
      for (size_t i = 0; i < count; ++i) exact[i] += static_cast<double>(next(g));
    }
    ASSERT_EQ(braid_allreduce(v.data(), v.data(), count, BRAID_FLOAT32, BRAID_SUM, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    EXPECT_TRUE(identical_on_all_ranks(v.data(), count * sizeof(float))) << "count " << count;
    for (size_t i = 0; i < count; i += 97)
      ASSERT_NEAR(v[i], exact[i], 1e-4 * (1.0 + std::fabs(exact[i]))) << "element " << i;
  }
}

}  // namespace
}  // namespace mp
