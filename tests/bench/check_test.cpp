// --check: the inputs are exact in every dtype, the expected values are what the reduction
// gives, and count_wrong counts a deliberately corrupted result exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "check.hpp"

namespace braid_bench {
namespace {

constexpr Dtype kDtypes[] = {Dtype::int8,    Dtype::uint8,  Dtype::int32,   Dtype::uint32,
                             Dtype::int64,   Dtype::uint64, Dtype::float16, Dtype::bfloat16,
                             Dtype::float32, Dtype::float64};
constexpr Op kOps[] = {Op::sum, Op::prod, Op::min, Op::max};

uint16_t bits16(Dtype d, int64_t v) {
  uint16_t b = 0;
  store_value(d, &b, 0, v);
  return b;
}

TEST(Check, SixteenBitFloatEncodingsAreExact) {
  EXPECT_EQ(bits16(Dtype::float16, 0), 0x0000);
  EXPECT_EQ(bits16(Dtype::float16, 1), 0x3C00);
  EXPECT_EQ(bits16(Dtype::float16, 2), 0x4000);
  EXPECT_EQ(bits16(Dtype::float16, 3), 0x4200);
  EXPECT_EQ(bits16(Dtype::float16, 10), 0x4900);
  EXPECT_EQ(bits16(Dtype::float16, 1000), 0x63D0);
  EXPECT_EQ(bits16(Dtype::float16, 2047), 0x67FF);
  EXPECT_EQ(bits16(Dtype::float16, 2048), 0x6800);
  EXPECT_EQ(bits16(Dtype::float16, -2), 0xC000);
  EXPECT_EQ(bits16(Dtype::bfloat16, 0), 0x0000);
  EXPECT_EQ(bits16(Dtype::bfloat16, 1), 0x3F80);
  EXPECT_EQ(bits16(Dtype::bfloat16, 3), 0x4040);
  EXPECT_EQ(bits16(Dtype::bfloat16, 255), 0x437F);
  EXPECT_EQ(bits16(Dtype::bfloat16, 256), 0x4380);
}

// Every result is a small non-negative integer within the dtype's exact range and never the
// poison pattern, for any rank count: so a result has exactly one correct bit pattern.
TEST(Check, ExpectedValuesStayExactForAnyRankCount) {
  for (Dtype d : kDtypes) {
    const int64_t limit = d == Dtype::int8       ? 127
                          : d == Dtype::uint8    ? 254
                          : d == Dtype::bfloat16 ? 256
                          : d == Dtype::float16  ? 2048
                                                 : int64_t{1} << 24;
    for (Op op : kOps) {
      for (int ranks : {1, 2, 3, 4, 5, 8, 63, 64, 100, 127, 128, 1000}) {
        for (size_t i = 0; i < 300; ++i) {
          const int64_t e = expected_value(Collective::allreduce, op, d, ranks, 0, i);
          ASSERT_GE(e, 0) << name(d) << " " << name(op) << " " << ranks << " " << i;
          ASSERT_LE(e, limit) << name(d) << " " << name(op) << " " << ranks << " " << i;
        }
      }
    }
  }
}

TEST(Check, ExpectedIsTheReductionOfTheInputs) {
  // sum of two ranks: (i % 4) + (i % 97), rank 0's, and ((i + 1) % 4)
  for (size_t i = 0; i < 200; ++i)
    EXPECT_EQ(expected_value(Collective::allreduce, Op::sum, Dtype::float32, 2, 0, i),
              static_cast<int64_t>(i % 4 + i % 97 + (i + 1) % 4));
  // prod: one rank in ranks+1 contributes 2 or 3, the others 1.
  for (size_t i = 0; i < 20; ++i) {
    const int64_t e = expected_value(Collective::allreduce, Op::prod, Dtype::int32, 4, 0, i);
    EXPECT_EQ(e, i % 5 == 4 ? 1 : 2 + static_cast<int64_t>((i / 5) % 2)) << i;
  }
  for (size_t i = 0; i < 200; ++i) {
    int64_t lo = 1000, hi = -1;
    for (int r = 0; r < 3; ++r) {
      lo = std::min<int64_t>(lo, static_cast<int64_t>((7 * i + 3 * r) % 11 + i % 97));
      hi = std::max<int64_t>(hi, static_cast<int64_t>((7 * i + 3 * r) % 11 + i % 97));
    }
    EXPECT_EQ(expected_value(Collective::allreduce, Op::min, Dtype::uint8, 3, 0, i), lo);
    EXPECT_EQ(expected_value(Collective::allreduce, Op::max, Dtype::uint8, 3, 0, i), hi);
  }
  // Broadcast: everyone ends with the root's input.
  for (size_t i = 0; i < 20; ++i)
    EXPECT_EQ(expected_value(Collective::broadcast, Op::sum, Dtype::int8, 4, 2, i),
              input_value(Collective::broadcast, Op::sum, Dtype::int8, 2, 4, 2, i));
}

// Reducing the filled input buffers of 3 ranks in the dtype's own arithmetic gives exactly the
// filled expected buffer.
template <typename T>
void reduce_natively(Dtype d) {
  constexpr int ranks = 3;
  constexpr size_t count = 257;
  for (Op op : kOps) {
    std::vector<std::vector<T>> in(ranks, std::vector<T>(count));
    for (int r = 0; r < ranks; ++r)
      fill_input(Collective::allreduce, op, d, r, ranks, 0, in[r].data(), count);
    std::vector<T> result = in[0];
    for (int r = 1; r < ranks; ++r)
      for (size_t i = 0; i < count; ++i) {
        const T v = in[r][i];
        result[i] = op == Op::sum    ? static_cast<T>(result[i] + v)
                    : op == Op::prod ? static_cast<T>(result[i] * v)
                    : op == Op::min  ? std::min(result[i], v)
                                     : std::max(result[i], v);
      }
    std::vector<T> expected(count);
    fill_expected(Collective::allreduce, op, d, ranks, 0, expected.data(), count);
    EXPECT_EQ(count_wrong(expected.data(), result.data(), d, count), 0u) << name(d) << name(op);
  }
}

TEST(Check, FillExpectedMatchesNativeReduction) {
  reduce_natively<int8_t>(Dtype::int8);
  reduce_natively<uint8_t>(Dtype::uint8);
  reduce_natively<int32_t>(Dtype::int32);
  reduce_natively<uint32_t>(Dtype::uint32);
  reduce_natively<int64_t>(Dtype::int64);
  reduce_natively<uint64_t>(Dtype::uint64);
  reduce_natively<float>(Dtype::float32);
  reduce_natively<double>(Dtype::float64);
}

// A block delivered to the wrong place must be counted as wrong: no two blocks of a sweep's
// power-of-two size hold the same expected values (with inputs of period 4 alone, every block
// of a sum was the same, and a reduce_scatter handing every rank block 0 passed).
TEST(Check, BlocksOfAPowerOfTwoSizeDiffer) {
  for (Dtype d : kDtypes)
    for (Op op : {Op::sum, Op::min, Op::max})
      for (int ranks : {2, 3, 4, 8, 11, 16, 64}) {
        for (size_t count = 4; count <= 4096; count *= 2) {
          const size_t es = dtype_size(d);
          std::vector<unsigned char> mine(count * es), next(count * es);
          for (int r = 0; r < std::min(ranks, 4); ++r) {
            fill_expected_recv(Collective::reduce_scatter, op, d, r, ranks, 0, mine.data(), count);
            fill_expected_recv(Collective::reduce_scatter, op, d, (r + 1) % ranks, ranks, 0,
                               next.data(), count);
            EXPECT_GT(count_wrong(mine.data(), next.data(), d, count), 0u)
                << name(d) << " " << name(op) << " " << ranks << " ranks, blocks of " << count
                << ": rank " << r << "'s and rank " << (r + 1) % ranks << "'s are the same";
          }
        }
      }
}

TEST(Check, BroadcastNonRootInputIsPoisoned) {
  std::vector<uint8_t> buf(64, 0);
  fill_input(Collective::broadcast, Op::sum, Dtype::int32, 1, 4, 2, buf.data(), 16);
  EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](uint8_t b) { return b == 0xFF; }));
  fill_input(Collective::broadcast, Op::sum, Dtype::int32, 2, 4, 2, buf.data(), 16);
  std::vector<uint8_t> expected(64);
  fill_expected(Collective::broadcast, Op::sum, Dtype::int32, 4, 2, expected.data(), 16);
  EXPECT_EQ(count_wrong(expected.data(), buf.data(), Dtype::int32, 16), 0u);
}

TEST(Check, CorruptedResultIsCountedExactly) {
  constexpr size_t count = 1000;
  for (Dtype d : kDtypes) {
    const size_t es = dtype_size(d);
    std::vector<unsigned char> expected(count * es);
    fill_expected(Collective::allreduce, Op::sum, d, 4, 0, expected.data(), count);
    std::vector<unsigned char> actual = expected;
    EXPECT_EQ(count_wrong(expected.data(), actual.data(), d, count), 0u) << name(d);

    // Flip one bit in 7 different elements, two bytes of one more element (still one element),
    // and the last byte of the last element.
    for (size_t i : {0, 1, 99, 500, 501, 777, 998}) actual[i * es] ^= 0x01;
    if (es > 1) {
      actual[300 * es] ^= 0x10;
      actual[300 * es + 1] ^= 0x10;
    } else {
      actual[300] ^= 0x10;
    }
    actual[count * es - 1] ^= 0x80;
    EXPECT_EQ(count_wrong(expected.data(), actual.data(), d, count), 9u) << name(d);
    // Only the first 500 elements: 0, 1, 99, 300.
    EXPECT_EQ(count_wrong(expected.data(), actual.data(), d, 500), 4u) << name(d);
  }
}

TEST(Check, UnwrittenPoisonedElementsAreWrong) {
  constexpr size_t count = 64;
  for (Dtype d : kDtypes) {
    for (Op op : kOps) {
      const size_t es = dtype_size(d);
      std::vector<unsigned char> expected(count * es), actual(count * es);
      fill_expected(Collective::allreduce, op, d, 2, 0, expected.data(), count);
      poison(actual.data(), actual.size());
      EXPECT_EQ(count_wrong(expected.data(), actual.data(), d, count), count)
          << name(d) << " " << name(op);
      // A collective that wrote only the first half leaves the second half wrong.
      std::memcpy(actual.data(), expected.data(), count / 2 * es);
      EXPECT_EQ(count_wrong(expected.data(), actual.data(), d, count), count / 2);
    }
  }
}

}  // namespace
}  // namespace braid_bench
