// Vectors large enough for the hierarchical algorithms' segment pipeline (2 MiB and up, cut
// into segments of 1-2 MiB whose node-local and leader stages overlap): exact results for every
// dtype (the ops in turns), counts that do not divide into segments or ranks, in place and not,
// identical bits on every rank. On one node or without fake nodes the same calls take the
// flat or shm paths and must give the same answers.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "exact_allreduce.hpp"
#include "rank_env.hpp"

namespace mp {
namespace {

constexpr size_t kSegment = size_t{1} << 20;  // the smallest segment (segment_pipeline.cpp)

// Two segments and one element (a last segment of one element), every dtype, the ops taking
// turns (each meets integer and float dtypes, in place and not; the turns start at the rank
// count, so the rank counts of the ctest variants, 1-5 and 8, give every dtype every op).
// Segments are cut by element size, never by op, and the kernels are checked for every dtype x
// op in the unit tests; the full product here took about a quarter of every multiproc
// variant's time.
TEST(Pipeline, AllreduceEveryDtypeOverSegments) {
  size_t d = static_cast<size_t>(size());
  for (braid_dtype_t dt : kSweepDtypes) {
    const braid_op_t op = kAllOps[d % std::size(kAllOps)];
    const size_t count = 2 * kSegment / elem_size(dt) + 1;
    check_allreduce(dt, op, count, /*in_place=*/(d / std::size(kAllOps)) % 2 == 0);
    if (HasFatalFailure()) return;
    ++d;
  }
}

// Many segments, a count that is prime (divides into neither segments nor ranks).
TEST(Pipeline, AllreduceManySegmentsOddCount) {
  check_allreduce(BRAID_FLOAT32, BRAID_SUM, 1900009,
                  false);  // 7.25 MiB: three 2 MiB segments and a short one
  check_allreduce(BRAID_INT8, BRAID_MAX, 5 * kSegment + 13, true);
  check_allreduce(BRAID_FLOAT16, BRAID_PROD, 3 * kSegment / 2 + 7, false);
}

// The order of reduction matters for random floats; every rank must still hold the same bits.
TEST(Pipeline, AllreduceRandomFloatsIdenticalBitsOnEveryRank) {
  for (size_t count : {size_t{1048583}, size_t{2621447}}) {  // 4 MiB + 28 B, 10 MiB + 28 B
    std::mt19937 gen(99u + static_cast<unsigned>(rank()));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(count);
    for (float &x : v) x = dist(gen) * std::pow(10.0f, static_cast<float>(gen() % 7) - 3.0f);
    ASSERT_EQ(braid_allreduce(v.data(), v.data(), count, BRAID_FLOAT32, BRAID_SUM, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    EXPECT_TRUE(identical_on_all_ranks(v.data(), count * sizeof(float))) << "count " << count;
  }
}

unsigned char root_byte(int root, size_t i) {
  return static_cast<unsigned char>((i * 131 + static_cast<size_t>(root) * 29 + (i >> 9)) & 0xff);
}

// Every root (on its node's leader or not), counts that leave a short last segment.
TEST(Pipeline, BroadcastEveryRootOverSegments) {
  for (braid_dtype_t dt : {BRAID_UINT8, BRAID_FLOAT64}) {
    const size_t count = (3 * kSegment + 5) / elem_size(dt) + 1;
    std::vector<unsigned char> buf(count * elem_size(dt));
    for (int root = 0; root < size(); ++root) {
      for (size_t i = 0; i < buf.size(); ++i)
        buf[i] = rank() == root ? root_byte(root, i) : static_cast<unsigned char>(0x5a ^ i);
      ASSERT_EQ(braid_broadcast(buf.data(), count, dt, root, world()), BRAID_SUCCESS)
          << braid_last_error();
      size_t wrong = 0;
      for (size_t i = 0; i < buf.size(); ++i) wrong += buf[i] != root_byte(root, i);
      ASSERT_EQ(wrong, 0u) << dtype_str(dt) << " count " << count << " root " << root;
    }
  }
}

// Non-blocking large calls in flight together still pair up segment by segment.
TEST(Pipeline, TwoNonBlockingAllreducesInFlight) {
  const size_t count = 3 * kSegment / sizeof(int32_t) + 3;
  std::vector<int32_t> a(count), b(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<int32_t>(i % 1000) + rank();
    b[i] = static_cast<int32_t>(i % 777) * (rank() + 1);
  }
  braid_request_t ra = nullptr, rb = nullptr;
  ASSERT_EQ(braid_iallreduce(a.data(), a.data(), count, BRAID_INT32, BRAID_SUM, world(), &ra),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_iallreduce(b.data(), b.data(), count, BRAID_INT32, BRAID_MAX, world(), &rb),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_wait(&rb), BRAID_SUCCESS) << braid_last_error();
  ASSERT_EQ(braid_wait(&ra), BRAID_SUCCESS) << braid_last_error();
  const int n = size();
  for (size_t i = 0; i < count; i += 101) {
    ASSERT_EQ(a[i], static_cast<int32_t>(i % 1000) * n + n * (n - 1) / 2) << i;
    ASSERT_EQ(b[i], static_cast<int32_t>(i % 777) * n) << i;
  }
}

}  // namespace
}  // namespace mp
