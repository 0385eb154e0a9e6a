// ScratchPool: blocks come back for reuse, except those given back while held (the frame of a
// collective whose abandoned send the transport may still read): a later call must not get them.
#include <gtest/gtest.h>

#include "engine/scratch_pool.hpp"

namespace braid::coll {
namespace {

TEST(ScratchPool, AGivenBackBlockIsReused) {
  ScratchPool pool;
  char *first = nullptr;
  {
    ScratchPool::Lease a = pool.acquire(100000);
    first = a.data();
  }
  EXPECT_GT(pool.cached_bytes(), 0u);
  ScratchPool::Lease b = pool.acquire(100000);
  EXPECT_EQ(b.data(), first);
}

TEST(ScratchPool, BlocksGivenBackWhileHeldAreNeverHandedOutAgain) {
  ScratchPool pool;
  char *held = nullptr;
  {
    ScratchPool::Lease a = pool.acquire(100000);
    held = a.data();
    a.data()[0] = 7;  // what a send abandoned to the transport still reads
    pool.hold_returns(true);
  }
  pool.hold_returns(false);
  EXPECT_EQ(pool.held_blocks(), 1u);
  EXPECT_EQ(pool.cached_bytes(), 0u);
  ScratchPool::Lease b = pool.acquire(100000);
  EXPECT_NE(b.data(), held);
  EXPECT_EQ(held[0], 7);  // still mapped: the transport may read it until the pool goes
}

}  // namespace
}  // namespace braid::coll
