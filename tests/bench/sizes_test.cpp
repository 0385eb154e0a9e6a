// The size sweep (doubling, rounding to the element size) and the iteration schedule.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sizes.hpp"

namespace braid_bench {
namespace {

TEST(Sizes, ParseRejectsWithReasons) {
  std::string why;
  EXPECT_FALSE(parse_size("", &why));
  EXPECT_FALSE(parse_size("-8", &why));
  EXPECT_FALSE(parse_size("8.5K", &why));
  EXPECT_NE(why.find("unknown suffix"), std::string::npos);
  EXPECT_FALSE(parse_size("0K", &why));
  EXPECT_NE(why.find("at least 1 byte"), std::string::npos);
  EXPECT_EQ(parse_size("64G", &why), 64ull << 30);
  EXPECT_FALSE(parse_size("65537M", &why));
}

TEST(Sizes, DefaultSweepDoublesFrom8BytesTo64MiB) {
  const std::vector<size_t> s = size_list(8, 64 * kMiB, 4);
  ASSERT_EQ(s.size(), 24u);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 64 * kMiB);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], 2 * s[i - 1]);
}

TEST(Sizes, MinEqualsMaxIsOneSize) {
  EXPECT_EQ(size_list(4096, 4096, 4), std::vector<size_t>{4096});
}

TEST(Sizes, MaxNotOnTheDoublingGridIsNotAdded) {
  EXPECT_EQ(size_list(8, 100, 1), (std::vector<size_t>{8, 16, 32, 64}));
}

TEST(Sizes, RoundedDownToElementSizeAtLeastOneElement) {
  // 1, 2 -> one float32 (4 bytes), dropped as duplicates; then 4, 8, 16.
  EXPECT_EQ(size_list(1, 16, 4), (std::vector<size_t>{4, 8, 16}));
  // 6 -> 4, 12 -> 12, 24, 48, 96.
  EXPECT_EQ(size_list(6, 100, 4), (std::vector<size_t>{4, 12, 24, 48, 96}));
  // Below one float64 element: one element anyway.
  EXPECT_EQ(size_list(2, 4, 8), std::vector<size_t>{8});
  EXPECT_EQ(size_list(3, 3, 2), std::vector<size_t>{2});
  // float16: 10 -> 10, 20, 40; int8 keeps everything.
  EXPECT_EQ(size_list(10, 40, 2), (std::vector<size_t>{10, 20, 40}));
  EXPECT_EQ(size_list(7, 28, 1), (std::vector<size_t>{7, 14, 28}));
  for (size_t es : {1, 2, 4, 8})
    for (size_t b : size_list(3, 1 << 20, es)) EXPECT_EQ(b % es, 0u) << b << " / " << es;
}

TEST(Sizes, InvalidRangeIsEmpty) {
  EXPECT_TRUE(size_list(16, 8, 4).empty());
  EXPECT_TRUE(size_list(0, 8, 4).empty());
}

TEST(Sizes, HugeMaxDoesNotOverflow) {
  const std::vector<size_t> s = size_list(1, SIZE_MAX, 1);
  EXPECT_EQ(s.size(), 64u);
  EXPECT_EQ(s.back(), size_t{1} << 63);
}

TEST(Iterations, OsuLikeDefaults) {
  EXPECT_EQ(iterations_for(8, {}, {}).iters, 1000);
  EXPECT_EQ(iterations_for(8, {}, {}).warmup, 100);
  EXPECT_EQ(iterations_for(8 * kKiB, {}, {}).iters, 1000);
  EXPECT_EQ(iterations_for(16 * kKiB, {}, {}).iters, 707);
  EXPECT_EQ(iterations_for(16 * kKiB, {}, {}).warmup, 70);
  EXPECT_EQ(iterations_for(1 * kMiB, {}, {}).iters, 88);
  EXPECT_EQ(iterations_for(64 * kMiB, {}, {}).iters, 11);
  EXPECT_EQ(iterations_for(64 * kMiB, {}, {}).warmup, 2);
  EXPECT_EQ(iterations_for(1 * kGiB, {}, {}).iters, 10);
  EXPECT_EQ(iterations_for(1 * kGiB, {}, {}).warmup, 2);
}

TEST(Iterations, NeverIncreaseWithSize) {
  int last = 1 << 30;
  for (size_t b : size_list(1, 64 * kGiB, 1)) {
    const Iterations it = iterations_for(b, {}, {});
    EXPECT_LE(it.iters, last) << b;
    EXPECT_GE(it.iters, 10) << b;
    EXPECT_GE(it.warmup, 2) << b;
    last = it.iters;
  }
}

TEST(Iterations, ExplicitValuesApplyToEverySize) {
  for (size_t b : {size_t{8}, 64 * kMiB}) {
    EXPECT_EQ(iterations_for(b, 5, 1).iters, 5);
    EXPECT_EQ(iterations_for(b, 5, 1).warmup, 1);
    EXPECT_EQ(iterations_for(b, 5, 0).warmup, 0);
    EXPECT_EQ(iterations_for(b, 50, {}).warmup, 5);  // a tenth of --iters
    EXPECT_EQ(iterations_for(b, 5, {}).warmup, 2);   // at least 2
  }
  EXPECT_EQ(iterations_for(8, {}, 3).iters, 1000);
  EXPECT_EQ(iterations_for(8, {}, 3).warmup, 3);
}

}  // namespace
}  // namespace braid_bench
