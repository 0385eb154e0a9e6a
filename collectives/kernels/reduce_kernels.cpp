// Dispatch and loops of braid::coll::reduce.
//
// reduce() switches once on (dtype, op) and then runs a tight loop with no per-element
// decisions. Performance notes (checked with -fdump-tree-vect-details and objdump on g++ 12):
//  - Each per-dtype kernel is built twice with GCC function multiversioning: an AVX2 clone and a
//    baseline x86-64 (SSE2) clone, picked once at load time by an ifunc resolver. The library must
//    run on CPUs without AVX2/AVX-512 and is not built with -march=native.
//  - The loops run in fixed-size blocks of kBlock elements. GCC 12 at -O2 uses the "very cheap"
//    vectorizer cost model, which refuses loops that would need a scalar epilogue; a fixed inner
//    trip count that is a multiple of every vector width needs none, so the blocks vectorize at
//    -O2 (the RelWithDebInfo default) as well as at -O3. The remainder (< kBlock) runs scalar.
//  - The loops take __restrict pointers so no runtime overlap checks are needed. Aliasing is
//    handled by dispatching: dst == left and dst == right get their own two-pointer loops.
//  - What vectorizes: every dtype x op in the AVX2 clone, and everything but the 64-bit types
//    in the baseline clone. There, int64/uint64 min/max/prod lack SSE2 instructions and g++'s
//    cost model rejects 2-lane sum and float64 min/max, so those stay scalar off AVX2.
#include "kernels/reduce_kernels.hpp"

#include <cstdint>
#include <type_traits>

#include "error.hpp"
#include "kernels/dtype.hpp"
#include "kernels/reduce_ops.hpp"

// An AVX2 clone picked at load time by an ifunc resolver. ThreadSanitizer instruments the
// resolver, which then runs before the sanitizer is initialised and crashes: TSan builds get
// the default clone only.
#if defined(__SANITIZE_THREAD__)
#define BRAID_KERNEL_CLONES
#else
#define BRAID_KERNEL_CLONES __attribute__((target_clones("avx2", "default")))
#endif

namespace braid::coll {
namespace reduce_detail {
namespace {

// 64 elements is a whole number of vectors for every element size up to 64-byte (AVX-512)
// vectors, and short enough that small messages are not dominated by the scalar remainder.
constexpr size_t kBlock = 64;

template <typename E, typename Op>
struct Loops {
  using T = typename E::Storage;

  BRAID_REDUCE_INLINE static void out_of_place(T *__restrict dst, const T *__restrict left,
                                               const T *__restrict right, size_t n) {
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
      for (size_t j = i; j < i + kBlock; ++j) dst[j] = combine<E, Op>(left[j], right[j]);
    for (; i < n; ++i) dst[i] = combine<E, Op>(left[i], right[i]);
  }

  // dst == left: dst[i] = op(dst[i], right[i]).
  BRAID_REDUCE_INLINE static void into_left(T *__restrict dst, const T *__restrict right,
                                            size_t n) {
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
      for (size_t j = i; j < i + kBlock; ++j) dst[j] = combine<E, Op>(dst[j], right[j]);
    for (; i < n; ++i) dst[i] = combine<E, Op>(dst[i], right[i]);
  }

  // dst == right: dst[i] = op(left[i], dst[i]); the operand order is kept.
  BRAID_REDUCE_INLINE static void into_right(T *__restrict dst, const T *__restrict left,
                                             size_t n) {
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
      for (size_t j = i; j < i + kBlock; ++j) dst[j] = combine<E, Op>(left[j], dst[j]);
    for (; i < n; ++i) dst[i] = combine<E, Op>(left[i], dst[i]);
  }

  // dst == left == right: rare, but legal, and a restrict loop would be UB for it.
  BRAID_REDUCE_INLINE static void into_self(T *__restrict dst, size_t n) {
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
      for (size_t j = i; j < i + kBlock; ++j) dst[j] = combine<E, Op>(dst[j], dst[j]);
    for (; i < n; ++i) dst[i] = combine<E, Op>(dst[i], dst[i]);
  }

  BRAID_REDUCE_INLINE static void run(void *dst, const void *left, const void *right, size_t n) {
    T *d = static_cast<T *>(dst);
    const T *l = static_cast<const T *>(left);
    const T *r = static_cast<const T *>(right);
    // left == right with a distinct dst is fine for out_of_place: restrict only forbids
    // aliasing with an object that is written.
    if (d == l && d == r)
      into_self(d, n);
    else if (d == l)
      into_left(d, r, n);
    else if (d == r)
      into_right(d, l, n);
    else
      out_of_place(d, l, r, n);
  }
};

// One multiversioned entry point per dtype; the op switch and the alias checks run once per
// call. The loops are always-inline so they are compiled inside each clone with its ISA.
template <typename E>
BRAID_KERNEL_CLONES void reduce_dtype(void *dst, const void *left, const void *right, size_t n,
                                      braid_op_t op) {
  switch (op) {
    case BRAID_SUM:
    case BRAID_AVG:  // summed here; finish_average divides the final result once
      return Loops<E, Sum>::run(dst, left, right, n);
    case BRAID_PROD:
      return Loops<E, Prod>::run(dst, left, right, n);
    case BRAID_MIN:
      return Loops<E, Min>::run(dst, left, right, n);
    case BRAID_MAX:
      return Loops<E, Max>::run(dst, left, right, n);
    default:
      break;
  }
  if constexpr (std::is_integral_v<typename E::Compute>) {
    switch (op) {
      case BRAID_BAND:
        return Loops<E, BAnd>::run(dst, left, right, n);
      case BRAID_BOR:
        return Loops<E, BOr>::run(dst, left, right, n);
      case BRAID_BXOR:
        return Loops<E, BXor>::run(dst, left, right, n);
      case BRAID_LAND:
        return Loops<E, LAnd>::run(dst, left, right, n);
      case BRAID_LOR:
        return Loops<E, LOr>::run(dst, left, right, n);
      case BRAID_LXOR:
        return Loops<E, LXor>::run(dst, left, right, n);
      default:  // the range enumerators and invalid values
        break;
    }
  }
}

// Every element divided by `ranks`: integers truncated toward zero (C++'s division), floats
// divided in their compute type and stored back (float16/bfloat16 rounded to nearest even).
template <typename E>
void divide(void *buf, size_t n, int ranks) {
  using T = typename E::Storage;
  using C = typename E::Compute;
  T *p = static_cast<T *>(buf);
  // The divisor in a type that holds any rank count: in the element's own type 128 ranks
  // would be -128 for int8 and 256 would be 0 (SIGFPE) for uint8.
  using Wide = std::conditional_t<std::is_floating_point_v<C>, C,
                                  std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>>;
  const Wide d = static_cast<Wide>(ranks);
  for (size_t i = 0; i < n; ++i)
    p[i] = E::store(static_cast<C>(static_cast<Wide>(E::load(p[i])) / d));
}

}  // namespace
}  // namespace reduce_detail

void finish_average(void *buf, size_t count, braid_dtype_t dt, int ranks) {
  using namespace reduce_detail;
  if (count == 0 || ranks == 1) return;
  switch (dt) {
    case BRAID_INT8:
      return divide<Native<int8_t>>(buf, count, ranks);
    case BRAID_UINT8:
      return divide<Native<uint8_t>>(buf, count, ranks);
    case BRAID_INT16:
      return divide<Native<int16_t>>(buf, count, ranks);
    case BRAID_UINT16:
      return divide<Native<uint16_t>>(buf, count, ranks);
    case BRAID_INT32:
      return divide<Native<int32_t>>(buf, count, ranks);
    case BRAID_UINT32:
      return divide<Native<uint32_t>>(buf, count, ranks);
    case BRAID_INT64:
      return divide<Native<int64_t>>(buf, count, ranks);
    case BRAID_UINT64:
      return divide<Native<uint64_t>>(buf, count, ranks);
    case BRAID_FLOAT16:
      return divide<Float16>(buf, count, ranks);
    case BRAID_BFLOAT16:
      return divide<BFloat16>(buf, count, ranks);
    case BRAID_FLOAT32:
      return divide<Native<float>>(buf, count, ranks);
    case BRAID_FLOAT64:
      return divide<Native<double>>(buf, count, ranks);
    default:
      detail::fail(BRAID_ERR_INVALID_ARGUMENT, "average: invalid dtype ", int(dt));
  }
}

void reduce(void *dst, const void *left, const void *right, size_t count, braid_dtype_t dt,
            braid_op_t op) {
  using namespace reduce_detail;
  if (!dtype_valid(dt)) detail::fail(BRAID_ERR_INVALID_ARGUMENT, "reduce: invalid dtype ", int(dt));
  if (!op_valid(op)) detail::fail(BRAID_ERR_INVALID_ARGUMENT, "reduce: invalid op ", int(op));
  if (const char *why = op_dtype_problem(op, dt))
    detail::fail(BRAID_ERR_INVALID_ARGUMENT, "reduce: op ", op_name(op), " on ", dtype_name(dt),
                 ": ", why);
  if (count == 0) return;
  switch (dt) {
    case BRAID_INT16:
      return reduce_dtype<Native<int16_t>>(dst, left, right, count, op);
    case BRAID_UINT16:
      return reduce_dtype<Native<uint16_t>>(dst, left, right, count, op);
    case BRAID_INT8:
      return reduce_dtype<Native<int8_t>>(dst, left, right, count, op);
    case BRAID_UINT8:
      return reduce_dtype<Native<uint8_t>>(dst, left, right, count, op);
    case BRAID_INT32:
      return reduce_dtype<Native<int32_t>>(dst, left, right, count, op);
    case BRAID_UINT32:
      return reduce_dtype<Native<uint32_t>>(dst, left, right, count, op);
    case BRAID_INT64:
      return reduce_dtype<Native<int64_t>>(dst, left, right, count, op);
    case BRAID_UINT64:
      return reduce_dtype<Native<uint64_t>>(dst, left, right, count, op);
    case BRAID_FLOAT16:
      return reduce_dtype<Float16>(dst, left, right, count, op);
    case BRAID_BFLOAT16:
      return reduce_dtype<BFloat16>(dst, left, right, count, op);
    case BRAID_FLOAT32:
      return reduce_dtype<Native<float>>(dst, left, right, count, op);
    case BRAID_FLOAT64:
      return reduce_dtype<Native<double>>(dst, left, right, count, op);
    default:  // the range enumerators and invalid values
      break;
  }
}

}  // namespace braid::coll
