// Element-wise building blocks of the reduction kernels: how an element is loaded into the type
// the operation is computed in, the four operations, and how the result is stored back.
//
// Everything here is a tiny always-inline function so that it is compiled inside each
// target_clones variant of the kernels (an out-of-line helper would be built for the baseline
// ISA only) and so that the element loop stays a single basic block the vectorizer can handle:
// operations are written with selects, never with branches or per-element switches.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "kernels/half.hpp"

#define BRAID_REDUCE_INLINE [[gnu::always_inline]] inline

namespace braid::coll::reduce_detail {

// ---- Element types: Storage is what lives in the buffer, Compute is what the op works on. ----

template <typename T>
struct Native {
  using Storage = T;
  using Compute = T;
  BRAID_REDUCE_INLINE static Compute load(Storage x) { return x; }
  BRAID_REDUCE_INLINE static Storage store(Compute x) { return x; }
};

// float16 and bfloat16 are reduced in float and rounded back to nearest even, element by element.
// float's 24-bit significand is at least 2p+2 bits for both formats (p = 11 and 8), so rounding
// the float result again is innocuous: a sum or product equals the correctly rounded result of
// the exact operation, as if the hardware had native half arithmetic.
struct Float16 {
  using Storage = uint16_t;
  using Compute = float;
  BRAID_REDUCE_INLINE static Compute load(Storage x) { return half_to_float(x); }
  BRAID_REDUCE_INLINE static Storage store(Compute x) { return float_to_half(x); }
  // A NaN, by its bits, and what a float sum or product with it on the left gives back once
  // rounded: itself with the quiet bit set (see Sum).
  BRAID_REDUCE_INLINE static bool is_nan(Storage x) { return (uint32_t{x} & 0x7fffu) > 0x7c00u; }
  BRAID_REDUCE_INLINE static uint32_t quieted(Storage x) { return uint32_t{x} | 0x0200u; }
};

struct BFloat16 {
  using Storage = uint16_t;
  using Compute = float;
  BRAID_REDUCE_INLINE static Compute load(Storage x) { return bfloat16_to_float(x); }
  BRAID_REDUCE_INLINE static Storage store(Compute x) { return float_to_bfloat16(x); }
  BRAID_REDUCE_INLINE static bool is_nan(Storage x) { return (uint32_t{x} & 0x7fffu) > 0x7f80u; }
  BRAID_REDUCE_INLINE static uint32_t quieted(Storage x) { return uint32_t{x} | 0x0040u; }
};

// ---- Operations on the Compute type. ----

// Integer sum/prod are computed in an unsigned type at least as wide as unsigned int:
// wraparound is defined there, signed overflow would be UB, and converting back to the signed
// type is modular since C++20. (The unsigned 8- and 16-bit types themselves would promote to
// int, where 65535 * 65535 overflows.)
template <typename T>
using Wrap = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

// Floating sum/prod: where both operands are NaN, the hardware returns the payload of whichever
// the compiler put first, and it orders a commutative operation as it likes, differently in
// each loop of a kernel (recursive doubling's two partners run different loops, so ranks
// disagreed on the sign of a NaN). So a NaN left operand wins, quieted: `apply` combines it with
// itself (a select picks the second operand); with the left one not a NaN there is one NaN
// payload at most to return. float16 and bfloat16 make the same choice on their bits instead
// (combine, kNanLeft): a select in float between their conversions cost them 6x.
template <typename T>
BRAID_REDUCE_INLINE T nan_left_operand(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return b;
  else
    return a != a ? a : b;
}

struct Sum {
  static constexpr bool kNanLeft = true;
  template <typename T>
  BRAID_REDUCE_INLINE static T plain(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b));
    else
      return a + b;
  }
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return plain(a, nan_left_operand(a, b));
  }
};

struct Prod {
  static constexpr bool kNanLeft = true;
  template <typename T>
  BRAID_REDUCE_INLINE static T plain(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b));
    else
      return a * b;
  }
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return plain(a, nan_left_operand(a, b));
  }
};

// Sign bit of a float/double via its bit pattern: plain integer code the vectorizer handles.
template <typename F>
BRAID_REDUCE_INLINE bool sign_bit(F x) {
  using Bits = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  return std::bit_cast<Bits>(x) < 0;
}

// Floating min/max follow IEEE 754-2019 minimum/maximum: a NaN operand makes the result NaN
// (the left one when both are NaN, so the choice of payload is fixed by operand order), and
// -0 orders below +0. The zero rule makes min/max commutative on every non-NaN input, so the
// result does not depend on which rank's contribution happens to be `left`.
// Bitwise | and & instead of || and && keep the condition free of branches.
struct Min {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return b < a ? b : a;
    } else {
      const bool take_a = (a < b) | (a != a) | ((a == b) & sign_bit(a));
      return take_a ? a : b;
    }
  }
};

struct Max {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return b > a ? b : a;
    } else {
      const bool take_a = (a > b) | (a != a) | ((a == b) & !sign_bit(a));
      return take_a ? a : b;
    }
  }
};

// Bitwise and logical ops: integer types only (the dispatch never instantiates them for floats).
// Logical results are 0 or 1 of the element type; written with bitwise operators on the
// comparisons so the loops stay branch-free.
struct BAnd {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct BOr {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct BXor {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};
struct LAnd {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return static_cast<T>((a != 0) & (b != 0));
  }
};
struct LOr {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return static_cast<T>((a != 0) | (b != 0));
  }
};
struct LXor {
  template <typename T>
  BRAID_REDUCE_INLINE static T apply(T a, T b) {
    return static_cast<T>((a != 0) ^ (b != 0));
  }
};

// One element: load both operands, apply the op, store the result. Half-precision sums and
// products pick a NaN left operand on its bits (Sum).
template <typename E, typename Op>
BRAID_REDUCE_INLINE typename E::Storage combine(typename E::Storage left,
                                                typename E::Storage right) {
  if constexpr (requires {
                  E::is_nan(left);
                  Op::kNanLeft;
                }) {
    // In 32 bits with a mask, like the conversions' own selects: a 16-bit ?: kept the loop
    // from vectorizing (9x slower).
    const uint32_t r = E::store(Op::plain(E::load(left), E::load(right)));
    return static_cast<typename E::Storage>(
        half_detail::blend(E::is_nan(left), E::quieted(left), r));
  } else {
    return E::store(Op::apply(E::load(left), E::load(right)));
  }
}

}  // namespace braid::coll::reduce_detail
