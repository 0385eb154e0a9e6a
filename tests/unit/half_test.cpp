// float16 and bfloat16 conversions, checked against references that share no code with them:
// ldexp-based decoding, g++'s own _Float16 conversions (libgcc soft-float on this baseline) when
// the compiler has the type, and an exact-arithmetic nearest-even search written in double.
#include "kernels/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace braid::coll {
namespace {

#if defined(__FLT16_MAX__)
#define BRAID_HAVE_FLOAT16_REFERENCE 1
#else
#define BRAID_HAVE_FLOAT16_REFERENCE 0
#endif

uint32_t bits_of(float f) {
  return std::bit_cast<uint32_t>(f);
}
float float_of(uint32_t u) {
  return std::bit_cast<float>(u);
}

bool half_is_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
}
bool bf16_is_nan(uint16_t b) {
  return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0;
}

// Decodes a half from its fields with ldexp in double: exact for every finite half.
double half_reference_value(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Round to nearest even by brute reasoning on values: f lies between the bfloat16 obtained by
// truncation (toward zero) and the next one away from zero; pick the closer, the even one on a
// tie. Differences of nearby floats are exact in double.
uint16_t bf16_reference(float f) {
  const uint32_t u = bits_of(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // any NaN is fine; caller
  const uint16_t toward_zero = static_cast<uint16_t>(u >> 16);
  const uint16_t away = static_cast<uint16_t>(toward_zero + 1);  // may become inf: correct
  const double lo = std::fabs(static_cast<double>(float_of(uint32_t(toward_zero) << 16)));
  const double hi_value = float_of(uint32_t(away) << 16);
  // Past the largest finite bfloat16 the next value "away" is 2^128 (encoded as inf).
  const double hi = std::isinf(hi_value) ? std::ldexp(1.0, 128) : std::fabs(hi_value);
  const double x = std::fabs(static_cast<double>(f));
  if (x - lo < hi - x) return toward_zero;
  if (x - lo > hi - x) return away;
  return (toward_zero & 1) ? away : toward_zero;
}

TEST(Half, ToFloatMatchesFieldDecodingForAllHalves) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    const double expected = half_reference_value(static_cast<uint16_t>(h));
    if (half_is_nan(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      // Sign and payload (including the quiet bit) are carried over.
      ASSERT_EQ(bits_of(f), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13))
          << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << h;  // -0 stays -0
    }
  }
}

#if BRAID_HAVE_FLOAT16_REFERENCE
TEST(Half, ToFloatMatchesCompilerFloat16) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float reference = static_cast<float>(std::bit_cast<_Float16>(bits));
    const float f = half_to_float(bits);
    if (std::isnan(reference))
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
    else
      ASSERT_EQ(bits_of(f), bits_of(reference)) << std::hex << h;
  }
}
#endif

TEST(Half, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const uint16_t back = float_to_half(half_to_float(bits));
    if (half_is_nan(bits)) {
      ASSERT_TRUE(half_is_nan(back)) << std::hex << h;
      ASSERT_TRUE(back & 0x0200u) << "NaN must come back quiet " << std::hex << h;
      // A quiet NaN keeps sign and payload; a signalling one only gains the quiet bit.
      ASSERT_EQ(back, bits | 0x0200u) << std::hex << h;
    } else {
      ASSERT_EQ(back, bits) << std::hex << h;
    }
  }
}

// For every pair of adjacent finite positive halves (k, k+1): the midpoint rounds to the one with
// the even mantissa, and the floats just below/above the midpoint round down/up. Covers the
// subnormal range, the subnormal/normal boundary and every binade; then the same with the sign.
TEST(Half, MidpointsRoundToEven) {
  for (uint32_t k = 0; k < 0x7bff; ++k) {
    const double a = half_reference_value(static_cast<uint16_t>(k));
    const double b = half_reference_value(static_cast<uint16_t>(k + 1));
    const float mid = static_cast<float>((a + b) / 2);
    ASSERT_EQ(static_cast<double>(mid), (a + b) / 2) << "midpoint must be exact in float";
    const float below = std::nextafter(mid, 0.0f);
    const float above = std::nextafter(mid, std::numeric_limits<float>::infinity());
    const uint16_t even = (k & 1) ? static_cast<uint16_t>(k + 1) : static_cast<uint16_t>(k);
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      ASSERT_EQ(float_to_half(s * mid), even | sign) << std::hex << k;
      ASSERT_EQ(float_to_half(s * below), k | sign) << std::hex << k;
      ASSERT_EQ(float_to_half(s * above), (k + 1) | sign) << std::hex << k;
    }
  }
}

TEST(Half, SpecialValuesAndOverflowBoundary) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);  // largest finite
  // 65520 is the midpoint between 65504 and 2^16; ties-to-even goes up to infinity.
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_half(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(float_to_half(std::nextafter(-65520.0f, 0.0f)), 0xfbff);
  EXPECT_EQ(float_to_half(65536.0f), 0x7c00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(float_to_half(kInf), 0x7c00);
  EXPECT_EQ(float_to_half(-kInf), 0xfc00);
  // Smallest subnormal 2^-24; half of it is a tie with 0 (even) and rounds to 0.
  EXPECT_EQ(float_to_half(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);
  EXPECT_EQ(float_to_half(-0x1p-25f), 0x8000);
  EXPECT_EQ(float_to_half(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(float_to_half(0x1.8p-24f), 0x0002);  // 1.5 ulp: tie, to even (2)
  EXPECT_EQ(float_to_half(0x1p-14f), 0x0400);    // smallest normal
  // Largest subnormal plus half an ulp: tie between 0x03ff (odd) and 0x0400 -> 0x0400.
  EXPECT_EQ(float_to_half(0x1.ffcp-15f), 0x0400);
  EXPECT_EQ(float_to_half(0x1.ff8p-15f), 0x03ff);  // largest subnormal itself
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::min()), 0x0000);
}

TEST(Half, NanStaysNanAndBecomesQuiet) {
  // Payload only in the low 13 bits: truncation would give 0x7c00 (inf); must stay NaN.
  for (uint32_t nan : {0x7f800001u, 0x7f801fffu, 0xff800001u, 0x7fc00000u, 0xffffffffu, 0x7fa00000u,
                       0x7f802000u}) {
    const uint16_t h = float_to_half(float_of(nan));
    EXPECT_TRUE(half_is_nan(h)) << std::hex << nan;
    EXPECT_TRUE(h & 0x0200u) << std::hex << nan;
    EXPECT_EQ(h & 0x8000u, (nan >> 16) & 0x8000u) << std::hex << nan;
  }
  EXPECT_EQ(float_to_half(float_of(0x7fc02000u)), 0x7e01);  // top payload bits kept
}

// Boundary cases are all in the constexpr path as well.
static_assert(float_to_half(1.0f) == 0x3c00);
static_assert(float_to_half(65520.0f) == 0x7c00);
static_assert(float_to_half(0x1p-25f) == 0x0000);
static_assert(float_to_half(0x1.8p-24f) == 0x0002);
static_assert(half_to_float(0x0001) == 0x1p-24f);
static_assert(half_to_float(0xfbff) == -65504.0f);
static_assert(float_to_bfloat16(1.0f) == 0x3f80);
static_assert(bfloat16_to_float(0xc000) == -2.0f);

#if BRAID_HAVE_FLOAT16_REFERENCE
// Random float bit patterns, and random floats concentrated in and around the half range, against
// the compiler's correctly rounded float -> _Float16 conversion.
TEST(Half, FromFloatMatchesCompilerFloat16) {
  std::mt19937_64 rng(0x5eed'1234);
  std::uniform_int_distribution<uint32_t> any_bits;
  // Exponents from well below the smallest subnormal (2^-26) to beyond overflow (2^17).
  std::uniform_int_distribution<uint32_t> exponent(127 - 27, 127 + 17);
  std::uniform_int_distribution<uint32_t> mantissa(0, (1u << 23) - 1);
  for (int i = 0; i < 2'000'000; ++i) {
    uint32_t u = any_bits(rng);
    if (i % 2) u = (u & 0x80000000u) | (exponent(rng) << 23) | mantissa(rng);
    const float f = float_of(u);
    const uint16_t got = float_to_half(f);
    const uint16_t reference = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    if (std::isnan(f)) {
      ASSERT_TRUE(half_is_nan(got)) << std::hex << u;
      ASSERT_TRUE(got & 0x0200u) << std::hex << u;
    } else {
      ASSERT_EQ(got, reference) << std::hex << u;
    }
  }
}

// Every float whose low 12 bits are 0x000, 0x001, 0x7ff, 0x800, 0x801 or 0xfff, for all upper bit
// patterns: exhausts the rounding decisions near every representable half (and the subnormal
// range, where the dropped bits reach further up, is covered by the midpoint test).
TEST(Half, FromFloatStructuredPatternsMatchCompilerFloat16) {
  for (uint32_t high = 0; high < (1u << 20); ++high) {
    for (uint32_t low : {0x000u, 0x001u, 0x7ffu, 0x800u, 0x801u, 0xfffu}) {
      const uint32_t u = (high << 12) | low;
      const float f = float_of(u);
      if (std::isnan(f)) continue;
      ASSERT_EQ(float_to_half(f), std::bit_cast<uint16_t>(static_cast<_Float16>(f)))
          << std::hex << u;
    }
  }
}
#endif

TEST(BFloat16, ToFloatIsExactForAll) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = bfloat16_to_float(static_cast<uint16_t>(b));
    ASSERT_EQ(bits_of(f), b << 16) << std::hex << b;
  }
}

TEST(BFloat16, RoundTripsEveryBFloat16) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const uint16_t back = float_to_bfloat16(bfloat16_to_float(bits));
    if (bf16_is_nan(bits))
      ASSERT_EQ(back, bits | 0x0040u) << std::hex << b;  // NaN, quiet, payload kept
    else
      ASSERT_EQ(back, bits) << std::hex << b;
  }
}

TEST(BFloat16, MidpointsRoundToEven) {
  for (uint32_t k = 0; k < 0x7f7f; ++k) {
    const uint32_t a = k << 16;
    const uint32_t mid = a | 0x8000u;  // exactly halfway to (k + 1) << 16
    const uint16_t even = (k & 1) ? static_cast<uint16_t>(k + 1) : static_cast<uint16_t>(k);
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint16_t s = static_cast<uint16_t>(sign >> 16);
      ASSERT_EQ(float_to_bfloat16(float_of(sign | mid)), even | s) << std::hex << k;
      ASSERT_EQ(float_to_bfloat16(float_of(sign | (mid - 1))), k | s) << std::hex << k;
      ASSERT_EQ(float_to_bfloat16(float_of(sign | (mid + 1))), (k + 1) | s) << std::hex << k;
    }
  }
  // Largest finite bfloat16 is 0x7f7f; its midpoint with 2^128 ties to even, i.e. infinity.
  EXPECT_EQ(float_to_bfloat16(float_of(0x7f7f8000u)), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(float_of(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(-0.0f), 0x8000);
}

TEST(BFloat16, NanNeverBecomesInfinity) {
  for (uint32_t nan : {0x7f800001u, 0x7f80ffffu, 0xff800001u, 0x7fffffffu, 0xffffffffu, 0x7fc00000u,
                       0x7f810000u}) {
    const uint16_t b = float_to_bfloat16(float_of(nan));
    EXPECT_TRUE(bf16_is_nan(b)) << std::hex << nan;
    EXPECT_TRUE(b & 0x0040u) << std::hex << nan;
    EXPECT_EQ(b & 0x8000u, (nan >> 16) & 0x8000u) << std::hex << nan;
  }
}

// Random bit patterns plus a strided sweep over all floats against the double-arithmetic
// reference.
TEST(BFloat16, FromFloatMatchesExactReference) {
  std::mt19937_64 rng(0xbf16);
  std::uniform_int_distribution<uint32_t> any_bits;
  auto check = [](uint32_t u) {
    const float f = float_of(u);
    const uint16_t got = float_to_bfloat16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(bf16_is_nan(got)) << std::hex << u;
    } else {
      ASSERT_EQ(got, bf16_reference(f)) << std::hex << u;
    }
  };
  for (int i = 0; i < 1'000'000; ++i) ASSERT_NO_FATAL_FAILURE(check(any_bits(rng)));
  // Stride 0x1003 is odd and not a multiple of 2^16, so the low 16 bits (the rounding decision)
  // take every value across the sweep.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 0x1003) {
    ASSERT_NO_FATAL_FAILURE(check(static_cast<uint32_t>(u)));
  }
}

}  // namespace
}  // namespace braid::coll
