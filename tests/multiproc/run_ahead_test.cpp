// Ranks that wait for nobody's record on the node path (a small broadcast's or scatter's root,
// a small gather's or reduce's other ranks) return at once, as an eager send does, and may run
// up to 8 calls (kCallsAhead, node_channel.hpp) ahead of a rank that is late. Their later calls
// must not overwrite what the late rank has not read yet: every call carries other data, and
// the late rank must get each call's own.
#include <time.h>
#include <unistd.h>

#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

constexpr int kCalls = 50;  // past the node path's 16 call slots three times
constexpr int kAhead = 8;   // kCallsAhead

long long now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // one clock for every process of the host
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// Element j of rank r's data in call i: exact in float32, and different in every call.
float value(int i, int r, size_t j) {
  return static_cast<float>(i * 1000 + r * 100 + static_cast<int>(j % 97));
}

// The late rank sleeps before its first call (long enough for the others to run as far ahead
// as they may) and briefly every few calls after.
void maybe_late(bool late, int i) {
  if (!late) return;
  if (i == 0) usleep(200000);
  if (i % 5 == 4) usleep(2000);
}

TEST(RunAhead, BroadcastRootsAheadOfALateReaderOverwriteNothingUnread) {
  const int last = size() - 1;
  const bool shm = shm_selected("BRAID_BROADCAST_ALGO");  // collective: every rank asks
  for (size_t count : {size_t{1}, size_t{100}, size_t{2000}}) {  // 2000 floats: 8000 bytes
    std::vector<long long> returned(kCalls);
    long long late_start = 0;
    ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS);  // every rank entered the call before
    for (int i = 0; i < kCalls; ++i) {
      maybe_late(rank() == last, i);
      if (rank() == last && i == 0) late_start = now_ns();
      std::vector<float> buf(count, -1.0f);
      if (rank() == 0)
        for (size_t j = 0; j < count; ++j) buf[j] = value(i, 0, j);
      ASSERT_EQ(braid_broadcast(buf.data(), count, BRAID_FLOAT32, 0, world()), BRAID_SUCCESS)
          << braid_last_error();
      returned[static_cast<size_t>(i)] = now_ns();
      for (size_t j = 0; j < count; ++j)
        ASSERT_EQ(buf[j], value(i, 0, j)) << "call " << i << " element " << j << " of " << count;
    }
    ASSERT_EQ(braid_broadcast(&late_start, 1, BRAID_INT64, last, world()), BRAID_SUCCESS);
    // On the node path the root finished exactly kAhead calls before the late rank's first:
    // it waited for nobody, and then for the late rank to enter the call kAhead before.
    if (rank() == 0 && shm) {
      EXPECT_LT(returned[kAhead - 1], late_start) << count << " elements";
      EXPECT_GT(returned[kAhead], late_start) << count << " elements";
    }
  }
}

TEST(RunAhead, ScatterRootsAheadOfALateReaderOverwriteNothingUnread) {
  const int last = size() - 1;
  const size_t block = 24;  // 8 ranks' blocks fit a call record
  const auto n = static_cast<size_t>(size());
  for (int i = 0; i < kCalls; ++i) {
    maybe_late(rank() == last, i);
    std::vector<float> send(rank() == 0 ? block * n : 0), recv(block, -1.0f);
    for (size_t r = 0; r < send.size() / block; ++r)
      for (size_t j = 0; j < block; ++j) send[r * block + j] = value(i, static_cast<int>(r), j);
    ASSERT_EQ(braid_scatter(send.data(), recv.data(), block, BRAID_FLOAT32, 0, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t j = 0; j < block; ++j) ASSERT_EQ(recv[j], value(i, rank(), j)) << "call " << i;
  }
}

// The root is late: the others hand their data over and run ahead of it.
TEST(RunAhead, GatherAndReduceSendersAheadOfALateRootOverwriteNothingUnread) {
  const size_t count = 40;
  const auto n = static_cast<size_t>(size());
  for (int i = 0; i < kCalls; ++i) {
    maybe_late(rank() == 0, i);
    std::vector<float> send(count), gathered(rank() == 0 ? count * n : 0, -1.0f);
    for (size_t j = 0; j < count; ++j) send[j] = value(i, rank(), j);
    ASSERT_EQ(braid_gather(send.data(), gathered.data(), count, BRAID_FLOAT32, 0, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t r = 0; r < gathered.size() / count; ++r)
      for (size_t j = 0; j < count; ++j)
        ASSERT_EQ(gathered[r * count + j], value(i, static_cast<int>(r), j)) << "call " << i;
  }
  for (int i = 0; i < kCalls; ++i) {
    maybe_late(rank() == 0, i);
    std::vector<float> send(count), sum(count, -1.0f);
    for (size_t j = 0; j < count; ++j) send[j] = value(i, rank(), j);
    ASSERT_EQ(braid_reduce(send.data(), sum.data(), count, BRAID_FLOAT32, BRAID_SUM, 0, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    if (rank() != 0) continue;
    for (size_t j = 0; j < count; ++j) {
      float expect = 0;
      for (int r = 0; r < size(); ++r) expect += value(i, r, j);
      ASSERT_EQ(sum[j], expect) << "call " << i << " element " << j;
    }
  }
}

}  // namespace
}  // namespace mp
