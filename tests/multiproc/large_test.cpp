// Counts whose byte size exceeds 2^31: every size_t path (chunking at the transport's maximum
// message, block offsets, segment counts) is exercised for real. Needs ~2.2 GiB per rank, so it
// runs only when BRAID_TEST_LARGE=1 (the 'large' CTest entry sets it, with 2 ranks).
#include <cstdlib>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

constexpr size_t kCount = (size_t{1} << 31) + 4099;  // int8 elements: > 2^31 bytes

bool large_enabled() {
  const char *v = std::getenv("BRAID_TEST_LARGE");
  return v != nullptr && v[0] == '1';
}

TEST(Large, AllreduceAndBroadcastBeyondTwoGiB) {
  if (!large_enabled()) GTEST_SKIP() << "set BRAID_TEST_LARGE=1 (needs ~2.2 GiB per rank)";
  std::vector<int8_t> v(kCount);
  for (size_t i = 0; i < kCount; ++i)
    v[i] = static_cast<int8_t>((i + static_cast<size_t>(rank())) % 5);
  ASSERT_EQ(braid_allreduce(v.data(), v.data(), kCount, BRAID_INT8, BRAID_SUM, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) {
    int expected = 0;
    for (int r = 0; r < size(); ++r) expected += static_cast<int>((i + static_cast<size_t>(r)) % 5);
    wrong += v[i] != static_cast<int8_t>(expected);
  }
  ASSERT_EQ(wrong, 0u);

  for (size_t i = 0; i < kCount; i += 4096) v[i] = rank() == 0 ? 7 : -7;
  v[kCount - 1] = rank() == 0 ? 9 : -9;
  ASSERT_EQ(braid_broadcast(v.data(), kCount, BRAID_INT8, 0, world()), BRAID_SUCCESS)
      << braid_last_error();
  for (size_t i = 0; i < kCount; i += 4096) ASSERT_EQ(v[i], 7) << "element " << i;
  EXPECT_EQ(v[kCount - 1], 9);
}

}  // namespace
}  // namespace mp
