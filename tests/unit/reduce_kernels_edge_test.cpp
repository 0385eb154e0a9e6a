// braid::coll::reduce: the semantics spelled out case by case (wraparound, NaN propagation,
// signed zeros, half-precision rounding, argument errors). The randomized comparison against a
// scalar reference is in reduce_kernels_test.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "kernels/half.hpp"
#include "kernels/reduce_kernels.hpp"
#include "same_bits.hpp"

namespace braid::coll {
namespace {

// 70 elements: one vector block plus a scalar remainder, so each value is checked in both code
// paths.

template <typename T>
std::vector<T> run(braid_dtype_t dt, braid_op_t op, T a, T b) {
  std::vector<T> left(70, a), right(70, b), dst(70);
  reduce(dst.data(), left.data(), right.data(), dst.size(), dt, op);
  return dst;
}

template <typename T>
void expect_all(const std::vector<T> &v, T expected) {
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_TRUE(same_bits(v[i], expected)) << "element " << i << ": " << +v[i];
}

TEST(ReduceKernels, IntegerOverflowWraps) {
  expect_all<int8_t>(run<int8_t>(BRAID_INT8, BRAID_SUM, 127, 1), -128);
  expect_all<int8_t>(run<int8_t>(BRAID_INT8, BRAID_PROD, -128, -1), -128);
  expect_all<int8_t>(run<int8_t>(BRAID_INT8, BRAID_PROD, 16, 16), 0);
  expect_all<uint8_t>(run<uint8_t>(BRAID_UINT8, BRAID_SUM, 200, 100), 44);
  expect_all<uint8_t>(run<uint8_t>(BRAID_UINT8, BRAID_PROD, 255, 255), 1);
  // 16-bit products leave int's range on the way (65535 * 65535): wrapped, not undefined (the
  // sanitizer job checks there is no signed overflow).
  expect_all<uint16_t>(run<uint16_t>(BRAID_UINT16, BRAID_PROD, 65535, 65535), 1);
  expect_all<int16_t>(run<int16_t>(BRAID_INT16, BRAID_PROD, -32768, -1), -32768);
  expect_all<int16_t>(run<int16_t>(BRAID_INT16, BRAID_PROD, -32768, -32768), 0);
  expect_all<uint16_t>(run<uint16_t>(BRAID_UINT16, BRAID_SUM, 65535, 2), 1);
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  expect_all<int32_t>(run<int32_t>(BRAID_INT32, BRAID_SUM, kMax32, 1), kMin32);
  expect_all<int32_t>(run<int32_t>(BRAID_INT32, BRAID_SUM, kMin32, -1), kMax32);
  expect_all<int32_t>(run<int32_t>(BRAID_INT32, BRAID_PROD, kMin32, -1), kMin32);
  expect_all<int32_t>(run<int32_t>(BRAID_INT32, BRAID_PROD, 65536, 65536), 0);
  expect_all<uint32_t>(run<uint32_t>(BRAID_UINT32, BRAID_SUM, 0xffffffffu, 2), 1u);
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();
  expect_all<int64_t>(run<int64_t>(BRAID_INT64, BRAID_SUM, kMax64, 1), kMin64);
  expect_all<int64_t>(run<int64_t>(BRAID_INT64, BRAID_PROD, kMin64, -1), kMin64);
  expect_all<int64_t>(run<int64_t>(BRAID_INT64, BRAID_PROD, kMax64, kMax64), int64_t{1});
  expect_all<uint64_t>(run<uint64_t>(BRAID_UINT64, BRAID_PROD, ~uint64_t{0}, ~uint64_t{0}),
                       uint64_t{1});
}

TEST(ReduceKernels, SignedMinMaxCompareSigned) {
  expect_all<int8_t>(run<int8_t>(BRAID_INT8, BRAID_MIN, -1, 1), -1);
  expect_all<int64_t>(run<int64_t>(BRAID_INT64, BRAID_MAX, -5, -7), int64_t{-5});
  expect_all<uint64_t>(run<uint64_t>(BRAID_UINT64, BRAID_MIN, ~uint64_t{0}, 1), uint64_t{1});
  expect_all<uint32_t>(run<uint32_t>(BRAID_UINT32, BRAID_MAX, 0x80000000u, 1), 0x80000000u);
}

TEST(ReduceKernels, FloatMinMaxPropagateNan) {
  const float nan_a = std::bit_cast<float>(0x7fc00001u);
  const float nan_b = std::bit_cast<float>(0xffc00002u);
  for (braid_op_t op : {BRAID_MIN, BRAID_MAX}) {
    SCOPED_TRACE(op);
    expect_all<float>(run<float>(BRAID_FLOAT32, op, nan_a, 1.0f), nan_a);
    expect_all<float>(run<float>(BRAID_FLOAT32, op, 1.0f, nan_b), nan_b);
    expect_all<float>(run<float>(BRAID_FLOAT32, op, nan_a, nan_b), nan_a);  // left NaN wins
    expect_all<float>(run<float>(BRAID_FLOAT32, op, nan_b, nan_a), nan_b);
    const double dnan = std::bit_cast<double>(0x7ff8000000000005ull);
    expect_all<double>(run<double>(BRAID_FLOAT64, op, -1e300, dnan), dnan);
    expect_all<double>(run<double>(BRAID_FLOAT64, op, dnan, -1e300), dnan);
    // Infinity is an ordinary value, not a NaN.
    const double inf = std::numeric_limits<double>::infinity();
    expect_all<double>(run<double>(BRAID_FLOAT64, op, inf, 3.0), op == BRAID_MIN ? 3.0 : inf);
  }
  // float16 / bfloat16: NaN in either operand gives NaN (quiet), the left payload first.
  const uint16_t h_nan_a = 0x7e01, h_nan_b = 0xfe02, h_one = 0x3c00;
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_MIN, h_nan_a, h_one), h_nan_a);
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_MAX, h_one, h_nan_b), h_nan_b);
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_MAX, h_nan_a, h_nan_b), h_nan_a);
  const uint16_t b_nan_a = 0x7fc1, b_nan_b = 0xffc2, b_one = 0x3f80;
  expect_all<uint16_t>(run<uint16_t>(BRAID_BFLOAT16, BRAID_MIN, b_one, b_nan_a), b_nan_a);
  expect_all<uint16_t>(run<uint16_t>(BRAID_BFLOAT16, BRAID_MIN, b_nan_b, b_nan_a), b_nan_b);
  // A signalling NaN comes out quiet (it went through float).
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_MAX, uint16_t{0x7c01}, h_one),
                       uint16_t{0x7e01});
}

TEST(ReduceKernels, SignedZeroOrderedInMinMax) {
  for (auto [a, b] : {std::pair{0.0f, -0.0f}, std::pair{-0.0f, 0.0f}}) {
    expect_all<float>(run<float>(BRAID_FLOAT32, BRAID_MIN, a, b), -0.0f);
    expect_all<float>(run<float>(BRAID_FLOAT32, BRAID_MAX, a, b), 0.0f);
  }
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_MIN, 0x0000, 0x8000), 0x8000);
  expect_all<uint16_t>(run<uint16_t>(BRAID_BFLOAT16, BRAID_MAX, 0x8000, 0x0000), 0x0000);
}

TEST(ReduceKernels, HalfPrecisionRoundsToNearestEven) {
  // 2048 + 1 is exactly between halves 2048 and 2050: ties to even keeps 2048 (0x6800).
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_SUM, 0x6800, 0x3c00), 0x6800);
  // 2050 + 1 = 2051 is between 2050 (odd mantissa) and 2052: ties to even gives 2052 (0x6802).
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_SUM, 0x6801, 0x3c00), 0x6802);
  // 65504 + 16 = 65520 overflows to infinity.
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_SUM, 0x7bff, 0x4c00), 0x7c00);
  // Subnormal products: 2^-24 * 0.5 = 2^-25 is a tie with 0 -> 0 (even).
  expect_all<uint16_t>(run<uint16_t>(BRAID_FLOAT16, BRAID_PROD, 0x0001, 0x3800), 0x0000);
  // bfloat16: 256 + 1 is a tie between 256 and 258 -> 256 (0x4380); 258 + 1 -> 260 (0x4382).
  expect_all<uint16_t>(run<uint16_t>(BRAID_BFLOAT16, BRAID_SUM, 0x4380, 0x3f80), 0x4380);
  expect_all<uint16_t>(run<uint16_t>(BRAID_BFLOAT16, BRAID_SUM, 0x4381, 0x3f80), 0x4382);
  // Opposite infinities: NaN, never infinity.
  const auto v = run<uint16_t>(BRAID_FLOAT16, BRAID_SUM, 0x7c00, 0xfc00);
  for (uint16_t x : v) ASSERT_TRUE(std::isnan(half_to_float(x))) << x;
}

TEST(ReduceKernels, ZeroCountIsNoOpEvenWithNullPointers) {
  EXPECT_NO_THROW(reduce(nullptr, nullptr, nullptr, 0, BRAID_FLOAT32, BRAID_SUM));
}

TEST(ReduceKernels, InvalidDtypeOrOpThrowsInvalidArgument) {
  float a = 1, b = 2, d = 0;
  try {
    reduce(&d, &a, &b, 1, static_cast<braid_dtype_t>(12), BRAID_SUM);
    FAIL() << "no exception";
  } catch (const detail::Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(f.what()).find("dtype"), std::string::npos) << f.what();
  }
  try {
    reduce(&d, &a, &b, 1, BRAID_FLOAT32, static_cast<braid_op_t>(11));
    FAIL() << "no exception";
  } catch (const detail::Failure &f) {
    EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(f.what()).find("op"), std::string::npos) << f.what();
  }
  EXPECT_EQ(d, 0.0f);
}

}  // namespace
}  // namespace braid::coll
