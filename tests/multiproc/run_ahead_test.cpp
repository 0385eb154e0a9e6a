// Ranks that wait for nobody's record on the node path (a small broadcast's or scatter's root,
// a small gather's or reduce's other ranks) return at once, as an eager send does; the roots
// may run up to 8 calls (kCallsAhead, node_channel.hpp) ahead of a rank that is late, the
// senders one. Their later calls must not overwrite what the late rank has not read yet: every
// call carries other data, and the late rank must get each call's own.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
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
// as they may: a few small calls, microseconds each) and briefly every few calls after.
void maybe_late(bool late, int i) {
  if (!late) return;
  if (i == 0) usleep(50000);
  if (i % 5 == 4) usleep(2000);
}

// A file the root creates once it has made its first kAhead calls, which the late rank waits
// for before its first: whether the root got that far without the late rank is then a fact,
// not a race against a sleep. Same host only (the node path).
class Handshake {
 public:
  Handshake(long long token, size_t round)
      : path_("/tmp/braid-run-ahead-" + std::to_string(token) + "-" + std::to_string(round)) {}
  ~Handshake() { std::remove(path_.c_str()); }
  void signal() const {
    if (FILE *f = std::fopen(path_.c_str(), "w")) std::fclose(f);
  }
  bool await() const {
    for (int ms = 0; ms < 60000; ++ms) {
      if (access(path_.c_str(), F_OK) == 0) return true;
      usleep(1000);
    }
    return false;
  }

 private:
  std::string path_;
};

TEST(RunAhead, BroadcastRootsAheadOfALateReaderOverwriteNothingUnread) {
  const int last = size() - 1;
  const bool shm = shm_selected("BRAID_BROADCAST_ALGO");  // collective: every rank asks
  long long token = getpid();
  ASSERT_EQ(braid_broadcast(&token, 1, BRAID_INT64, 0, world()), BRAID_SUCCESS);
  for (size_t count : {size_t{3}, size_t{100}, size_t{2000}}) {  // 2000 floats: 8000 bytes
    const Handshake handshake(token, count);
    std::vector<long long> returned(kCalls);
    long long late_start = 0;
    ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS);  // every rank entered the call before
    for (int i = 0; i < kCalls; ++i) {
      if (rank() == last && i == 0 && shm && last != 0) {
        EXPECT_TRUE(handshake.await()) << "the root never made " << kAhead << " calls alone";
      }
      // With the handshake the root is known to be ahead already: no need to sleep first.
      maybe_late(rank() == last && !(i == 0 && shm && last != 0), i);
      if (rank() == last && i == 0) late_start = now_ns();
      // Each call's record differs from the one before (its count), so a check that read a
      // record of a later turn would fail.
      const size_t n = count - static_cast<size_t>(i % 3);
      std::vector<float> buf(n, -1.0f);
      if (rank() == 0)
        for (size_t j = 0; j < n; ++j) buf[j] = value(i, 0, j);
      ASSERT_EQ(braid_broadcast(buf.data(), n, BRAID_FLOAT32, 0, world()), BRAID_SUCCESS)
          << braid_last_error();
      returned[static_cast<size_t>(i)] = now_ns();
      if (rank() == 0 && i == kAhead - 1) handshake.signal();
      for (size_t j = 0; j < n; ++j)
        ASSERT_EQ(buf[j], value(i, 0, j)) << "call " << i << " element " << j << " of " << n;
    }
    // A large broadcast right after the run: its root waits for every rank again.
    std::vector<float> large(100000, -1.0f);
    if (rank() == 0)
      for (size_t j = 0; j < large.size(); ++j) large[j] = value(kCalls, 0, j);
    ASSERT_EQ(braid_broadcast(large.data(), large.size(), BRAID_FLOAT32, 0, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t j = 0; j < large.size(); ++j) ASSERT_EQ(large[j], value(kCalls, 0, j)) << j;
    ASSERT_EQ(braid_broadcast(&late_start, 1, BRAID_INT64, last, world()), BRAID_SUCCESS);
    // On the node path the root made its first kAhead calls alone (the handshake), and its next
    // one waited for the late rank to enter the first.
    if (rank() == 0 && shm) {
      EXPECT_GT(returned[kAhead], late_start) << count << " elements";
    }
  }
}

// The same with non-blocking calls: every rank starts them all, then waits for each in turn.
TEST(RunAhead, NonBlockingBroadcastsAheadOfALateReaderOverwriteNothingUnread) {
  const int last = size() - 1;
  constexpr int kStarted = 24;
  std::vector<std::vector<float>> bufs(kStarted);
  std::vector<braid_request_t> reqs(kStarted);
  if (rank() == last) usleep(100000);
  for (int i = 0; i < kStarted; ++i) {
    const size_t n = 16 + static_cast<size_t>(i % 3);
    bufs[static_cast<size_t>(i)].assign(n, -1.0f);
    if (rank() == 0)
      for (size_t j = 0; j < n; ++j) bufs[static_cast<size_t>(i)][j] = value(i, 0, j);
    ASSERT_EQ(braid_ibroadcast(bufs[static_cast<size_t>(i)].data(), n, BRAID_FLOAT32, 0, world(),
                               &reqs[static_cast<size_t>(i)]),
              BRAID_SUCCESS)
        << braid_last_error();
  }
  for (int i = 0; i < kStarted; ++i) {
    ASSERT_EQ(braid_wait(&reqs[static_cast<size_t>(i)]), BRAID_SUCCESS) << braid_last_error();
    const std::vector<float> &b = bufs[static_cast<size_t>(i)];
    for (size_t j = 0; j < b.size(); ++j) ASSERT_EQ(b[j], value(i, 0, j)) << "call " << i;
  }
}

TEST(RunAhead, ScatterRootsAheadOfALateReaderOverwriteNothingUnread) {
  const int last = size() - 1;
  const size_t block = 24;  // 8 ranks' blocks fit a call record
  const auto n = static_cast<size_t>(size());
  for (int i = 0; i < kCalls; ++i) {
    maybe_late(rank() == last, i);
    const size_t b = block - static_cast<size_t>(i % 3);  // each record unlike the one before
    std::vector<float> send(rank() == 0 ? b * n : 0), recv(b, -1.0f);
    for (size_t r = 0; r < send.size() / b; ++r)
      for (size_t j = 0; j < b; ++j) send[r * b + j] = value(i, static_cast<int>(r), j);
    ASSERT_EQ(braid_scatter(send.data(), recv.data(), b, BRAID_FLOAT32, 0, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t j = 0; j < b; ++j) ASSERT_EQ(recv[j], value(i, rank(), j)) << "call " << i;
  }
}

// The root is late: the others hand their data over and return (one call ahead of it at most).
TEST(RunAhead, GatherAndReduceSendersAheadOfALateRootOverwriteNothingUnread) {
  const auto n = static_cast<size_t>(size());
  for (int i = 0; i < kCalls; ++i) {
    maybe_late(rank() == 0, i);
    const size_t count = 40 - static_cast<size_t>(i % 3);  // each record unlike the one before
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
    const size_t count = 40 - static_cast<size_t>(i % 3);
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
