// IEEE binary16 (float16) and bfloat16 <-> float conversions.
//
// Header-only and constexpr so the reduction loops can inline them. Every conversion is written
// as straight-line integer code plus selects (no branches, no table lookups, no _Float16): the
// reduction kernels call them per element inside loops that g++ must auto-vectorize, and a branch
// or a data-dependent shift per element would stop that on the x86-64 baseline.
//
// The selects are mask blends on integers rather than ?: because g++ sinks a floating-point
// operation that only one arm of a ?: uses into that arm, and then refuses to if-convert the
// arm back (with the default -ftrapping-math a float op may trap), which leaves control flow in
// the loop and stops vectorization. With the blend every value is used on every path.
//
// Robustness choices:
//  - NaN is detected with integer compares on the bit pattern, never with x != x, so the
//    conversions stay correct even in a translation unit built with -ffinite-math-only.
//  - The only float arithmetic is on normal floats (results >= 2^-24), so an application that runs
//    with FTZ/DAZ set in MXCSR (anything linked with -ffast-math) still gets exact results.
#pragma once

#include <bit>
#include <cstdint>

namespace braid::coll {

namespace half_detail {
// cond ? a : b, branch-free.
constexpr uint32_t blend(bool cond, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(cond);
  return (a & mask) | (b & ~mask);
}
}  // namespace half_detail

// Exact: every half is representable as a float. NaN payloads (including the quiet bit, so a
// signalling NaN stays signalling) are carried over unchanged.
constexpr float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;  // exponent and mantissa
  // Normal: move the 10-bit mantissa to the top of float's 23 bits and rebias 15 -> 127.
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  // Inf/NaN: all-ones exponent, mantissa (payload) kept.
  const uint32_t special = (em << 13) | 0x7f800000u;
  // Subnormal or zero: the value is m * 2^-24. m < 1024 converts exactly and the scaling by a
  // power of two is exact; the result is a normal float, so DAZ/FTZ cannot touch it. Converting
  // an int avoids a count-leading-zeros normalisation, which does not vectorize without AVX-512.
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
  using half_detail::blend;
  const uint32_t magnitude = blend(em >= 0x7c00u, special, blend(em >= 0x0400u, normal, subnormal));
  return std::bit_cast<float>(magnitude | sign);
}

// Round to nearest, ties to even. Values >= 65520 (the midpoint between the largest finite half,
// 65504, and 2^16) become infinity; NaN stays NaN: the top payload bits are kept and the quiet bit
// is forced, so a NaN whose payload lives only in the low bits cannot turn into infinity.
constexpr uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;

  const uint32_t nan = 0x7e00u | ((abs >> 13) & 0x03ffu);
  const uint32_t inf = 0x7c00u;
  // Normal result (|f| >= 2^-14): rebias, then round away the 13 low bits to nearest even by
  // adding 0xfff plus the lowest kept bit. A mantissa carry correctly bumps the exponent, and
  // rounding up from the top binade lands exactly on the infinity encoding 0x7c00.
  const uint32_t normal = (abs - ((127u - 15u) << 23) + 0x0fffu + ((abs >> 13) & 1u)) >> 13;
  // Subnormal result (|f| < 2^-14): adding 0.5f aligns the sum so its ulp is 2^-24, the half
  // subnormal step, and the FPU's own round-to-nearest-even performs the rounding. Subtracting
  // the bits of 0.5f leaves the half mantissa; rounding up to 1024 yields 0x0400, the smallest
  // normal half, which is the right encoding. Float subnormal inputs round to 0 either way, so
  // DAZ does not change the answer.
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(std::bit_cast<float>(abs) + 0.5f) - 0x3f000000u;

  using half_detail::blend;
  const uint32_t magnitude =
      blend(abs > 0x7f800000u, nan,
            blend(abs >= 0x47800000u, inf,                         // |f| >= 2^16
                  blend(abs >= 0x38800000u, normal, subnormal)));  // |f| >= 2^-14
  return static_cast<uint16_t>(magnitude | sign);
}

// Exact: bfloat16 is the top half of a float. NaN payloads are carried over unchanged.
constexpr float bfloat16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Round to nearest, ties to even; overflow rounds to infinity. NaN stays NaN: a plain truncation
// of a NaN whose payload is only in the low 16 bits would give infinity, so the quiet bit is
// forced instead of rounding.
constexpr uint16_t float_to_bfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  // The carry out of the mantissa bumps the exponent (and max finite -> inf); it can only reach
  // the sign bit for NaN inputs, which take the other branch.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t nan = (bits >> 16) | 0x0040u;
  return static_cast<uint16_t>(
      half_detail::blend((bits & 0x7fffffffu) > 0x7f800000u, nan, rounded));
}

}  // namespace braid::coll
