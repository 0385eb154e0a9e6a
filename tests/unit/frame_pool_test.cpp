// The engine's recycled coroutine frames (engine/frame_pool.hpp): a frame freed is handed to
// the thread's next frame of its size class, never to a frame of a larger size, no block is
// handed out twice, a frame may be freed on another thread, and a Task's frame really comes
// from the pool. Under AddressSanitizer nothing is kept (so that a use after free
// of a frame is reported): the reuse checks are skipped there, the rest still runs.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "engine/frame_pool.hpp"
#include "engine/task.hpp"

namespace braid::coll {
namespace {

constexpr bool kFramesKept = frame_pool::kKeepsFrames;

TEST(FramePool, AFreedFrameIsReusedForTheNextOfItsClass) {
  void *a = frame_pool::allocate(200);
  std::memset(a, 0xab, 200);  // the whole size asked for is usable
  frame_pool::release(a, 200);
  // 200 and 250 bytes share the 193-256 class: the same block comes back.
  void *b = frame_pool::allocate(250);
  std::memset(b, 0xcd, 250);
  if (kFramesKept) {
    EXPECT_EQ(a, b);
  }
  // A larger frame never gets a block of a smaller class.
  frame_pool::release(b, 250);
  void *c = frame_pool::allocate(300);
  std::memset(c, 0xef, 300);
  if (kFramesKept) {
    EXPECT_NE(c, b);
  }
  frame_pool::release(c, 300);
}

TEST(FramePool, HandsOutDistinctFramesAndTheLastFreedFirst) {
  std::vector<void *> live;
  for (int i = 0; i < 20; ++i) live.push_back(frame_pool::allocate(1000));
  std::set<void *> distinct(live.begin(), live.end());
  EXPECT_EQ(distinct.size(), live.size());  // no block is handed out twice
  for (void *p : live) frame_pool::release(p, 1000);
  // Some are kept (a few per class); whatever was kept or not, 20 distinct blocks again.
  std::vector<void *> again;
  for (int i = 0; i < 20; ++i) again.push_back(frame_pool::allocate(1000));
  std::set<void *> distinct_again(again.begin(), again.end());
  EXPECT_EQ(distinct_again.size(), again.size());
  for (void *p : again) frame_pool::release(p, 1000);
  // Kept frames come back last freed first (the one whose memory is likeliest in cache).
  void *x = frame_pool::allocate(2000), *y = frame_pool::allocate(2000);
  frame_pool::release(x, 2000);
  frame_pool::release(y, 2000);
  void *first = frame_pool::allocate(2000), *second = frame_pool::allocate(2000);
  if (kFramesKept) {
    EXPECT_EQ(first, y);
    EXPECT_EQ(second, x);
  }
  frame_pool::release(first, 2000);
  frame_pool::release(second, 2000);
}

TEST(FramePool, AFrameMayBeFreedOnAnotherThreadAndThreadsEndCleanly) {
  void *mine = frame_pool::allocate(500);
  void *theirs = nullptr;
  std::thread t([&] {
    theirs = frame_pool::allocate(500);  // this thread keeps frames from now on
    frame_pool::release(mine, 500);      // a frame of the main thread, freed here
  });
  t.join();  // its Reaper gives back what it kept, `mine` among them
  ASSERT_NE(theirs, nullptr);
  EXPECT_NE(theirs, mine);
  std::memset(theirs, 3, 500);
  frame_pool::release(theirs, 500);  // made by the ended thread, kept by this one
  if (kFramesKept) {
    void *next = frame_pool::allocate(500);
    EXPECT_EQ(next, theirs);
    frame_pool::release(next, 500);
  }
}

Task record(int *out) {
  *out = 7;
  co_return;
}

TEST(FramePool, ATaskFrameComesFromThePool) {
  int value = 0;
  void *before = nullptr;
  {
    Task t = record(&value);
    t.handle().resume();
    EXPECT_TRUE(t.done());
    before = t.handle().address();
  }
  EXPECT_EQ(value, 7);
  // The next frame of the same coroutine is the block the first one left.
  Task t2 = record(&value);
  if (kFramesKept) {
    EXPECT_EQ(t2.handle().address(), before);
  }
  t2.handle().resume();
  EXPECT_TRUE(t2.done());
}

}  // namespace
}  // namespace braid::coll
