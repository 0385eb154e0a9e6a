// broadcast and barrier on every rank of the job: every root, sizes around the switch points,
// several dtypes; non-roots start from garbage and must end with the root's exact bytes.
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

unsigned char root_byte(int root, size_t i) {
  return static_cast<unsigned char>((i * 131 + static_cast<size_t>(root) * 17 + (i >> 8)) & 0xff);
}

TEST(Broadcast, EveryRootDeliversTheRootsBytes) {
  const std::vector<size_t> byte_sizes = {
      1, 7, 1000, (256 << 10) - 1, 256 << 10, (256 << 10) + 3, (1 << 20) + 11};
  for (braid_dtype_t dt : {BRAID_UINT8, BRAID_FLOAT16, BRAID_INT32, BRAID_FLOAT64}) {
    const size_t es = elem_size(dt);
    for (size_t bytes : byte_sizes) {
      const size_t count = (bytes + es - 1) / es;
      for (int root = 0; root < size(); ++root) {
        std::vector<unsigned char> buf(count * es);
        for (size_t i = 0; i < buf.size(); ++i)
          buf[i] = rank() == root ? root_byte(root, i) : static_cast<unsigned char>(0xa5 ^ i);
        ASSERT_EQ(braid_broadcast(buf.data(), count, dt, root, world()), BRAID_SUCCESS)
            << braid_last_error();
        size_t wrong = 0;
        for (size_t i = 0; i < buf.size(); ++i) wrong += buf[i] != root_byte(root, i);
        ASSERT_EQ(wrong, 0u) << dtype_str(dt) << " count " << count << " root " << root;
      }
    }
  }
}

TEST(Broadcast, CountZeroIsANoOp) {
  int x = rank();
  ASSERT_EQ(braid_broadcast(&x, 0, BRAID_INT32, 0, world()), BRAID_SUCCESS);
  EXPECT_EQ(x, rank());
}

TEST(Barrier, NoRankLeavesBeforeAllArrive) {
  // Each rank adds 1 to a counter only it owns, crosses the barrier, then checks via allreduce
  // that everyone had incremented before anyone left: a broken barrier lets sums disagree.
  for (int round = 0; round < 20; ++round) {
    ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS) << braid_last_error();
    int one = 1;
    ASSERT_EQ(braid_allreduce(&one, &one, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS);
    ASSERT_EQ(one, size());
  }
}

}  // namespace
}  // namespace mp
