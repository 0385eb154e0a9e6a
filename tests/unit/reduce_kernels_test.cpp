// braid::coll::reduce against a plain scalar reference, for every dtype x op, over counts that hit
// the empty case, the scalar remainder, whole vector blocks and both, with out-of-place and
// aliased destinations. Results are compared bit for bit, NaN payloads included: a sum or
// product of two NaNs keeps the left one's whatever loop computed it (reduce_ops.hpp), so that
// ranks that reduce the same pair in different loops agree.
#include "kernels/reduce_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/half.hpp"
#include "same_bits.hpp"

namespace braid::coll {
namespace {

constexpr braid_op_t kOps[] = {BRAID_SUM, BRAID_PROD, BRAID_MIN, BRAID_MAX};
constexpr size_t kCounts[] = {0, 1, 7, 8, 31, 33, 1000, 4099};

// ---- Scalar reference, written independently of the kernels. ----

template <typename T>
T int_reference(T a, T b, braid_op_t op) {
  // Wraparound via 64-bit unsigned arithmetic truncated back to T.
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BRAID_SUM:
      return static_cast<T>(ua + ub);
    case BRAID_PROD:
      return static_cast<T>(ua * ub);
    case BRAID_MIN:
      return std::min(a, b);
    case BRAID_MAX:
      return std::max(a, b);
    default:  // the range enumerators and invalid values
      break;
  }
  return T{};
}

template <typename F>
F float_reference(F a, F b, braid_op_t op) {
  switch (op) {
    case BRAID_SUM:
      return std::isnan(a) ? a + a : a + b;  // a NaN left operand's payload, quieted
    case BRAID_PROD:
      return std::isnan(a) ? a * a : a * b;
    case BRAID_MIN:
    case BRAID_MAX:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      if (a == b) {  // equal, or -0 vs +0: -0 is the smaller one
        const bool a_wins = op == BRAID_MIN ? std::signbit(a) : !std::signbit(a);
        return a_wins ? a : b;
      }
      if (op == BRAID_MIN) return a < b ? a : b;
      return a > b ? a : b;
    default:  // the range enumerators and invalid values
      break;
  }
  return F{};
}

struct Float16Tag {};
struct BFloat16Tag {};

// Per dtype: storage type, reference op, random values, special values, NaN test.
template <typename T>
struct Traits;

template <typename T>
struct IntTraits {
  using Storage = T;
  static T apply(T a, T b, braid_op_t op) { return int_reference(a, b, op); }
  static T random(std::mt19937_64 &rng) {
    // Mostly full-range values (sums and products overflow constantly), some small ones so
    // that products are not almost always 0 modulo 2^bits for the narrow types.
    if (rng() % 4 == 0) return static_cast<T>(static_cast<int64_t>(rng() % 21) - 10);
    return static_cast<T>(rng());
  }
  static bool is_nan(T) { return false; }
};

template <typename F>
struct FloatTraits {
  using Storage = F;
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  static F apply(F a, F b, braid_op_t op) { return float_reference(a, b, op); }
  static F random(std::mt19937_64 &rng) {
    constexpr F kSpecial[] = {
        F(0),
        -F(0),
        std::numeric_limits<F>::infinity(),
        -std::numeric_limits<F>::infinity(),
        std::numeric_limits<F>::quiet_NaN(),
        -std::numeric_limits<F>::quiet_NaN(),
        std::numeric_limits<F>::signaling_NaN(),
        std::numeric_limits<F>::denorm_min(),
        -std::numeric_limits<F>::denorm_min(),
        std::numeric_limits<F>::min() / 4,  // subnormal
        std::numeric_limits<F>::max(),
        -std::numeric_limits<F>::max(),
        F(1),
        F(-1),
    };
    switch (rng() % 8) {
      case 0:
        return kSpecial[rng() % std::size(kSpecial)];
      case 1:
        return std::bit_cast<F>(static_cast<Bits>(rng()));  // anything, NaN payloads included
      default:
        return std::uniform_real_distribution<F>(-1000, 1000)(rng);
    }
  }
  static bool is_nan(F x) { return std::isnan(x); }
};

// float16/bfloat16: the reference converts to float, applies the op, converts back. The
// conversions themselves are verified exhaustively in half_test.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
struct HalfTraits {
  using Storage = uint16_t;
  static uint16_t apply(uint16_t a, uint16_t b, braid_op_t op) {
    return FromFloat(float_reference(ToFloat(a), ToFloat(b), op));
  }
  static uint16_t random(std::mt19937_64 &rng) {
    switch (rng() % 4) {
      case 0:
        return static_cast<uint16_t>(rng());  // every pattern: NaN, inf, subnormals, ...
      case 1: {
        // Specials, often enough that NaN-vs-NaN and -0-vs-+0 pairs occur: NaNs with distinct
        // payloads (quiet and signalling), +-0, +-inf, smallest subnormal, 1.
        const float kSpecial[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), 1.0f};
        const uint16_t nan_low_bits = static_cast<uint16_t>(1 + rng() % 0x3f);
        switch (rng() % 8) {
          case 0:
            return static_cast<uint16_t>(FromFloat(std::numeric_limits<float>::quiet_NaN()) |
                                         nan_low_bits);
          case 1:  // signalling in both formats: quiet bit clear, payload non-zero
            return static_cast<uint16_t>(
                (FromFloat(std::numeric_limits<float>::infinity()) | nan_low_bits) | 0x8000u);
          case 2:
            return 0x0001;
          default:
            return FromFloat(kSpecial[rng() % std::size(kSpecial)]);
        }
      }
      default:
        return FromFloat(std::uniform_real_distribution<float>(-100, 100)(rng));
    }
  }
  static bool is_nan(uint16_t x) { return std::isnan(ToFloat(x)); }
};

template <>
struct Traits<int8_t> : IntTraits<int8_t> {};
template <>
struct Traits<uint8_t> : IntTraits<uint8_t> {};
template <>
struct Traits<int32_t> : IntTraits<int32_t> {};
template <>
struct Traits<uint32_t> : IntTraits<uint32_t> {};
template <>
struct Traits<int64_t> : IntTraits<int64_t> {};
template <>
struct Traits<uint64_t> : IntTraits<uint64_t> {};
template <>
struct Traits<float> : FloatTraits<float> {};
template <>
struct Traits<double> : FloatTraits<double> {};
template <>
struct Traits<Float16Tag> : HalfTraits<half_to_float, float_to_half> {};
template <>
struct Traits<BFloat16Tag> : HalfTraits<bfloat16_to_float, float_to_bfloat16> {};

enum class Alias { kNone, kLeft, kRight, kBoth };

const char *alias_name(Alias a) {
  switch (a) {
    case Alias::kNone:
      return "out-of-place";
    case Alias::kLeft:
      return "dst==left";
    case Alias::kRight:
      return "dst==right";
    case Alias::kBoth:
      return "dst==left==right";
  }
  return "?";
}

// Runs one (dtype, op, count, alias) case. The buffers carry a guard zone on both sides and an
// offset of one element so that the kernel sees unaligned pointers and must not write outside
// [0, count).
template <typename Tag>
void check_case(braid_dtype_t dt, braid_op_t op, size_t count, Alias alias, std::mt19937_64 &rng) {
  using Tr = Traits<Tag>;
  using S = typename Tr::Storage;
  constexpr size_t kGuard = 5;
  std::vector<S> left(count), right(count);
  for (size_t i = 0; i < count; ++i) {
    left[i] = Tr::random(rng);
    right[i] = alias == Alias::kBoth ? left[i] : Tr::random(rng);
  }
  std::vector<S> expected(count);
  for (size_t i = 0; i < count; ++i) expected[i] = Tr::apply(left[i], right[i], op);

  const S sentinel = static_cast<S>(0x5a);
  std::vector<S> buffer(count + 2 * kGuard, sentinel);
  S *dst = buffer.data() + kGuard;
  std::vector<S> other_storage(count + 1);
  S *other = other_storage.data() + 1;  // deliberately misaligned relative to dst
  switch (alias) {
    case Alias::kNone:
      std::copy(right.begin(), right.end(), other);
      reduce(dst, left.data(), other, count, dt, op);
      break;
    case Alias::kLeft:
      std::copy(left.begin(), left.end(), dst);
      std::copy(right.begin(), right.end(), other);
      reduce(dst, dst, other, count, dt, op);
      break;
    case Alias::kRight:
      std::copy(left.begin(), left.end(), other);
      std::copy(right.begin(), right.end(), dst);
      reduce(dst, other, dst, count, dt, op);
      break;
    case Alias::kBoth:
      std::copy(left.begin(), left.end(), dst);
      reduce(dst, dst, dst, count, dt, op);
      break;
  }

  for (size_t i = 0; i < kGuard; ++i) {
    ASSERT_TRUE(same_bits(buffer[i], sentinel)) << "wrote before dst";
    ASSERT_TRUE(same_bits(buffer[kGuard + count + i], sentinel)) << "wrote past dst + count";
  }
  for (size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(same_bits(dst[i], expected[i]))
        << "element " << i << ": got " << +dst[i] << " expected " << +expected[i] << " from "
        << +left[i] << " and " << +right[i];
  }
}

template <typename Tag>
void check_dtype(braid_dtype_t dt) {
  std::mt19937_64 rng(0xb4a1d + static_cast<unsigned>(dt));
  for (braid_op_t op : kOps) {
    for (size_t count : kCounts) {
      for (Alias alias : {Alias::kNone, Alias::kLeft, Alias::kRight, Alias::kBoth}) {
        SCOPED_TRACE(::testing::Message()
                     << "op " << op << " count " << count << " " << alias_name(alias));
        ASSERT_NO_FATAL_FAILURE(check_case<Tag>(dt, op, count, alias, rng));
      }
    }
  }
}

TEST(ReduceKernels, Int8) {
  check_dtype<int8_t>(BRAID_INT8);
}
TEST(ReduceKernels, Uint8) {
  check_dtype<uint8_t>(BRAID_UINT8);
}
TEST(ReduceKernels, Int32) {
  check_dtype<int32_t>(BRAID_INT32);
}
TEST(ReduceKernels, Uint32) {
  check_dtype<uint32_t>(BRAID_UINT32);
}
TEST(ReduceKernels, Int64) {
  check_dtype<int64_t>(BRAID_INT64);
}
TEST(ReduceKernels, Uint64) {
  check_dtype<uint64_t>(BRAID_UINT64);
}
TEST(ReduceKernels, Float16) {
  check_dtype<Float16Tag>(BRAID_FLOAT16);
}
TEST(ReduceKernels, BFloat16) {
  check_dtype<BFloat16Tag>(BRAID_BFLOAT16);
}
TEST(ReduceKernels, Float32) {
  check_dtype<float>(BRAID_FLOAT32);
}
TEST(ReduceKernels, Float64) {
  check_dtype<double>(BRAID_FLOAT64);
}

}  // namespace
}  // namespace braid::coll
