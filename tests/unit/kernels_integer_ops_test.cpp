// The ops added with the communicators issue: int16/uint16 for the arithmetic ops, bitwise and
// logical ops on every integer dtype, and the average's final division. Expected values come
// from plain scalar C++ on the same inputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

template <typename T>
T scalar(braid_op_t op, T a, T b) {
  // At least unsigned int: the 16-bit types would promote to int, where products overflow.
  using W = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
  switch (op) {
    case BRAID_SUM:
    case BRAID_AVG:
      return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    case BRAID_PROD:
      return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    case BRAID_MIN:
      return b < a ? b : a;
    case BRAID_MAX:
      return b > a ? b : a;
    case BRAID_BAND:
      return static_cast<T>(a & b);
    case BRAID_BOR:
      return static_cast<T>(a | b);
    case BRAID_BXOR:
      return static_cast<T>(a ^ b);
    case BRAID_LAND:
      return static_cast<T>(a != 0 && b != 0);
    case BRAID_LOR:
      return static_cast<T>(a != 0 || b != 0);
    case BRAID_LXOR:
      return static_cast<T>((a != 0) != (b != 0));
    default:
      return 0;
  }
}

constexpr braid_op_t kOps[] = {BRAID_SUM, BRAID_PROD, BRAID_MIN,  BRAID_MAX, BRAID_AVG, BRAID_BAND,
                               BRAID_BOR, BRAID_BXOR, BRAID_LAND, BRAID_LOR, BRAID_LXOR};

// Every op on `count` elements at an odd offset, out of place and into each operand, against
// the scalar reference; values include 0, -1, the extremes and random bits.
template <typename T>
void check_all_ops(braid_dtype_t dt) {
  std::mt19937_64 rng(1234);
  const size_t count = 203;  // blocks of 64 and a remainder
  std::vector<T> left(count + 1), right(count + 1);
  for (size_t i = 0; i < count + 1; ++i) {
    left[i] = static_cast<T>(rng());
    right[i] = static_cast<T>(rng());
  }
  const T specials[] = {0, static_cast<T>(-1), std::numeric_limits<T>::min(),
                        std::numeric_limits<T>::max(), 1};
  for (size_t k = 0; k < std::size(specials); ++k) {
    left[1 + k] = specials[k];
    right[1 + (k + 2) % std::size(specials)] = specials[k];
    right[10 + k] = 0;  // zeros meet non-zeros for the logical ops
  }
  for (braid_op_t op : kOps) {
    std::vector<T> expect(count), out(count + 1);
    for (size_t i = 0; i < count; ++i) expect[i] = scalar(op, left[i + 1], right[i + 1]);
    reduce(out.data() + 1, left.data() + 1, right.data() + 1, count, dt, op);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i + 1], expect[i]) << op << " at " << i;
    std::vector<T> l = left, r = right;
    reduce(l.data() + 1, l.data() + 1, r.data() + 1, count, dt, op);
    reduce(r.data() + 1, left.data() + 1, r.data() + 1, count, dt, op);
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(l[i + 1], expect[i]) << op << " into left at " << i;
      ASSERT_EQ(r[i + 1], expect[i]) << op << " into right at " << i;
    }
  }
}

TEST(KernelsIntegerOps, EveryOpOnEveryIntegerDtype) {
  check_all_ops<int8_t>(BRAID_INT8);
  check_all_ops<uint8_t>(BRAID_UINT8);
  check_all_ops<int16_t>(BRAID_INT16);
  check_all_ops<uint16_t>(BRAID_UINT16);
  check_all_ops<int32_t>(BRAID_INT32);
  check_all_ops<uint32_t>(BRAID_UINT32);
  check_all_ops<int64_t>(BRAID_INT64);
  check_all_ops<uint64_t>(BRAID_UINT64);
}

TEST(KernelsIntegerOps, BitwiseAndLogicalOpsRefuseFloatDtypes) {
  float a = 1, b = 2, d = 0;
  for (braid_op_t op : {BRAID_BAND, BRAID_BOR, BRAID_BXOR, BRAID_LAND, BRAID_LOR, BRAID_LXOR})
    for (braid_dtype_t dt : {BRAID_FLOAT16, BRAID_BFLOAT16, BRAID_FLOAT32, BRAID_FLOAT64}) {
      try {
        reduce(&d, &a, &b, 1, dt, op);
        ADD_FAILURE() << op << " accepted on dtype " << dt;
      } catch (const detail::Failure &f) {
        EXPECT_EQ(f.code(), BRAID_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(f.what()).find("integer dtype"), std::string::npos) << f.what();
      }
    }
  EXPECT_EQ(d, 0.0f);
}

TEST(KernelsAverage, IntegersTruncateTowardZero) {
  int32_t v[] = {-7, 7, -8, 8, 0, -1, 1, 2147483647, -2147483647 - 1};
  finish_average(v, std::size(v), BRAID_INT32, 2);
  const int32_t expect[] = {-3, 3, -4, 4, 0, 0, 0, 1073741823, -1073741824};
  for (size_t i = 0; i < std::size(v); ++i) EXPECT_EQ(v[i], expect[i]) << i;
  int8_t s[] = {-128, 127, -3, 3};
  finish_average(s, 4, BRAID_INT8, 3);
  EXPECT_EQ(s[0], -42);
  EXPECT_EQ(s[1], 42);
  EXPECT_EQ(s[2], -1);
  EXPECT_EQ(s[3], 1);
  uint16_t u[] = {65535, 5, 1};
  finish_average(u, 3, BRAID_UINT16, 4);
  EXPECT_EQ(u[0], 16383);
  EXPECT_EQ(u[1], 1);
  EXPECT_EQ(u[2], 0);
  uint64_t big[] = {~uint64_t{0}};
  finish_average(big, 1, BRAID_UINT64, 3);
  EXPECT_EQ(big[0], ~uint64_t{0} / 3);
}

// More ranks than the element type can count: the divisor must not wrap to a negative
// number (int8, 128 ranks) or to zero (uint8, 256 ranks: a division by zero).
TEST(KernelsAverage, RankCountsBeyondTheElementType) {
  int8_t s[] = {-128, 127, 64};
  finish_average(s, 3, BRAID_INT8, 128);
  EXPECT_EQ(s[0], -1);
  EXPECT_EQ(s[1], 0);
  EXPECT_EQ(s[2], 0);
  uint8_t u[] = {255, 0};
  finish_average(u, 2, BRAID_UINT8, 256);
  EXPECT_EQ(u[0], 0);
  EXPECT_EQ(u[1], 0);
  int16_t h[] = {-32768, 32767};
  finish_average(h, 2, BRAID_INT16, 40000);
  EXPECT_EQ(h[0], 0);
  EXPECT_EQ(h[1], 0);
  uint16_t w[] = {65535};
  finish_average(w, 1, BRAID_UINT16, 65536);
  EXPECT_EQ(w[0], 0);
  int8_t small[] = {-100};
  finish_average(small, 1, BRAID_INT8, 50);
  EXPECT_EQ(small[0], -2);
}

TEST(KernelsAverage, FloatsDivideInTheirComputeType) {
  float f[] = {1.0f, -3.0f, 7.0f};
  finish_average(f, 3, BRAID_FLOAT32, 3);
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  EXPECT_EQ(f[1], -1.0f);
  EXPECT_EQ(f[2], 7.0f / 3.0f);
  double d[] = {1.0, 10.0};
  finish_average(d, 2, BRAID_FLOAT64, 4);
  EXPECT_EQ(d[0], 0.25);
  EXPECT_EQ(d[1], 2.5);
  // float16: 1.0 = 0x3c00; 1/3 in float is 0.333333343, nearest half 0x3555 (0.33325195);
  // 3.0 / 2 = 1.5 = 0x3e00 exactly.
  uint16_t h[] = {0x3c00, 0x4200};
  finish_average(h, 1, BRAID_FLOAT16, 3);
  finish_average(h + 1, 1, BRAID_FLOAT16, 2);
  EXPECT_EQ(h[0], 0x3555);
  EXPECT_EQ(h[1], 0x3e00);
  // bfloat16: 1.0 = 0x3f80; 1/3 = 0x3eaaaaab in float rounds to 0x3eab.
  uint16_t b[] = {0x3f80};
  finish_average(b, 1, BRAID_BFLOAT16, 3);
  EXPECT_EQ(b[0], 0x3eab);
  // One rank: unchanged, whatever the dtype.
  int16_t one[] = {-5};
  finish_average(one, 1, BRAID_INT16, 1);
  EXPECT_EQ(one[0], -5);
}

}  // namespace
}  // namespace braid::coll
