// Copies into a collective's result that stream past the cache (kernels/stream_copy.hpp), taken
// where the call's buffers fill more than four times the last-level cache the node's ranks share,
// and between half and four times it where the rank's timings say so (StreamChoice).
// BRAID_CACHE_BYTES stands in for hwloc's size: 1 makes every node-local call that copies stream
// (multiproc.*.cma_on, multiproc.*.streamed_windows), 0 none; there the counter
// intranode_streamed_calls must say so, call by call; 4000000 puts TimedCallsAreExactEitherWay
// between the bounds (multiproc.2ranks.cma_off). Results are checked in every variant.
#include <braid/braid.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "rank_env.hpp"
#include "single_copy_checks.hpp"

namespace mp {
namespace {

uint64_t streamed_calls() {
  return braid::Comm(world()).counters()["intranode_streamed_calls"];
}

// `moved` of `calls` calls this rank made, `copies` whether this rank copies into a result.
void check_streamed(uint64_t moved, const char *algo_var, int calls, bool copies,
                    const std::string &what) {
  const char *v = std::getenv("BRAID_CACHE_BYTES");
  const std::string cache = v ? v : "";
  if (!shm_selected(algo_var) || cache == "0" || !copies) {
    EXPECT_EQ(moved, 0u) << what;
  } else if (cache == "1") {
    EXPECT_EQ(moved, static_cast<uint64_t>(calls)) << what;
  }
}

uint64_t gauged_deposits() {
  return braid::Comm(world()).counters()["intranode_slow_link_deposits"];
}

// Deposits into the windows of allgather(v) and alltoall(v) stream in a slow spell of the link
// (DepositGauge), which no test can call up; BRAID_CACHE_BYTES=1 streams every one: where the
// windows carry the call (single copy off: multiproc.4ranks.streamed_windows), each call
// deposits at least once. Elsewhere the counter depends on the link's state.
// Collective (shm_selected): every rank calls it; `deposits_some` whether this rank has any.
void check_gauged(uint64_t deposits, const char *algo_var, int calls, const std::string &what,
                  bool deposits_some = true) {
  const char *v = std::getenv("BRAID_CACHE_BYTES");
  const char *cma = std::getenv("BRAID_CMA");
  const bool shm = shm_selected(algo_var);
  const bool windows = shm && cma != nullptr && std::string(cma) == "off";
  if (windows && deposits_some && v != nullptr && std::string(v) == "1") {
    EXPECT_GE(deposits, static_cast<uint64_t>(calls)) << what;
  }
  if (!shm || !deposits_some) {
    EXPECT_EQ(deposits, 0u) << what;
  }
}

// Past what travels with the call records, an odd size, and one past the windows' 256 KiB.
constexpr size_t kStreamCounts[] = {4099, 100003};
constexpr int kStreamCalls = 2;

// Between the bounds each rank times its calls streamed and not, so the two follow each other
// (on a fresh communicator: a size's first three calls go the way the cache's share suggests,
// the fourth and fifth try the other way): every result exact. Under BRAID_CACHE_BYTES=4000000
// at 2 ranks the call's buffers (4 blocks of 1.2 MB a rank; their chooser class starts at
// 4 MiB) fill 1.05 or 2.1 times that cache, whether one rank or two share it: the share
// suggests streaming, so calls 1-3 stream and 4-5 do not.
TEST(Streaming, TimedCallsAreExactEitherWay) {
  const size_t n = static_cast<size_t>(size());
  constexpr size_t kCount = 300007;
  constexpr int kCalls = 24;
  const braid::Comm fresh = braid::Comm(world()).dup();  // its own chooser, no earlier calls
  // With single copy off (multiproc.2ranks.cma_off) the copy path never tries its other way,
  // which would hold the stream choice for a call and move its try later.
  const char *v = std::getenv("BRAID_CACHE_BYTES");
  const char *cma = std::getenv("BRAID_CMA");
  const bool timed = v != nullptr && std::string(v) == "4000000" && cma != nullptr &&
                     std::string(cma) == "off" && n == 2 && shm_selected("BRAID_ALLTOALL_ALGO");
  uint64_t streamed = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::vector<int32_t> send(kCount * n), recv(kCount * n, -1);
    for (size_t i = 0; i < send.size(); ++i) send[i] = value(rank(), i, call);
    ASSERT_EQ(braid_alltoall(send.data(), recv.data(), kCount, BRAID_INT32, fresh.native()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t s = 0; s < n; ++s)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(recv[s * kCount + i],
                  value(static_cast<int>(s), static_cast<size_t>(rank()) * kCount + i, call))
            << "call " << call << " from rank " << s << " at " << i;
    const uint64_t now = fresh.counters()["intranode_streamed_calls"];
    if (timed && call < 5) {
      EXPECT_EQ(now - streamed, call < 3 ? 1u : 0u) << "call " << call + 1 << " of a fresh size";
    }
    streamed = now;
  }
}

bool env_off(const char *name) {
  const char *v = std::getenv(name);
  return v != nullptr && std::string(v) == "off";
}

int32_t deposit_input(int r, size_t i, int call) {
  return static_cast<int32_t>((r * 1009 + static_cast<int>(i % 9973) * 7 + call) % 1000);
}

// A reduce's deposits past reduce_whole's vectors on more than two ranks are timed both ways by
// each rank (NodeChannel::streams_deposits), whatever BRAID_CACHE_BYTES says: on a fresh
// communicator a size's calls 1-3 use ordinary stores and 4-5 stream, and every result is
// exact. Call by call where every call takes the windows (single copy off:
// multiproc.4ranks.streamed_windows); on two ranks nothing is timed (the depositing rank does
// not see the root's part, shm_reduce.cpp), so the counter stays 0 (multiproc.2ranks.cma_off).
TEST(Streaming, ReduceDepositsAreTimedAndExact) {
  const int n = size();
  constexpr size_t kCount = 300007;  // four and a half windows
  constexpr int kCalls = 12;
  const braid::Comm fresh = braid::Comm(world()).dup();
  const char *cma = std::getenv("BRAID_CMA");
  const bool shm = shm_selected("BRAID_REDUCE_ALGO");  // collective: every rank asks
  const bool windows = shm && cma != nullptr && std::string(cma) == "off";
  for (const int root : {0, n - 1}) {
    const braid::Comm comm = fresh.dup();  // a fresh chooser per root
    uint64_t streamed = comm.counters()["intranode_streamed_deposits"];
    for (int call = 0; call < kCalls; ++call) {
      std::vector<int32_t> send(kCount), recv(kCount, -1);
      for (size_t i = 0; i < kCount; ++i) send[i] = deposit_input(rank(), i, call);
      ASSERT_EQ(braid_reduce(send.data(), recv.data(), kCount, BRAID_INT32, BRAID_SUM, root,
                             comm.native()),
                BRAID_SUCCESS)
          << braid_last_error();
      size_t wrong = 0;  // counted, not asserted: the others go on to the next call
      size_t first_wrong = kCount;
      if (rank() == root)
        for (size_t i = 0; i < kCount; ++i) {
          int32_t want = 0;
          for (int r = 0; r < n; ++r) want += deposit_input(r, i, call);
          if (recv[i] != want && wrong++ == 0) first_wrong = i;
        }
      EXPECT_EQ(wrong, 0u) << "root " << root << ", call " << call << ", first at " << first_wrong;
      const uint64_t now = comm.counters()["intranode_streamed_deposits"];
      if (n == 2 || (!shm && env_off("BRAID_INTRANODE"))) {
        EXPECT_EQ(now, 0u) << "nothing is timed here";
      } else if (windows && call < 5) {
        EXPECT_EQ(now - streamed, call < 3 ? 0u : 1u)
            << "root " << root << ", call " << call + 1 << " of a fresh size";
      }
      streamed = now;
    }
  }
}

// A gather's depositors stream as its root decides (shm_gather.cpp), the root publishing that
// with its call: blocks smaller than a window always stream, uncounted; from a window the root
// times both ways, streaming first: on a fresh communicator a size's calls 1-3 stream and 4-5
// do not, counted at the root (intranode_streamed_deposits) and nowhere else. Call by call where
// every call takes the windows (single copy off). The block, one window and a bit, is small
// enough that the root's copies out are not timed too under multiproc.2ranks.cma_off's
// BRAID_CACHE_BYTES (their try would hold this choice for a call).
TEST(Streaming, GatherDepositsAreChosenByTheRootAndExact) {
  const int n = size();
  constexpr size_t kCounts[] = {10007, 75001};  // 40 KB, and 300 KB past the 256 KiB window
  constexpr int kCalls = 8;
  const braid::Comm fresh = braid::Comm(world()).dup();
  const char *cma = std::getenv("BRAID_CMA");
  const bool shm = shm_selected("BRAID_GATHER_ALGO");  // collective: every rank asks
  const bool windows = shm && cma != nullptr && std::string(cma) == "off";
  for (const size_t count : kCounts)
    for (const int root : {0, n - 1}) {
      const braid::Comm comm = fresh.dup();  // a fresh chooser per root and size
      uint64_t streamed = comm.counters()["intranode_streamed_deposits"];
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int32_t> send(count), recv(rank() == root ? count * n : 0, -1);
        for (size_t i = 0; i < count; ++i) send[i] = value(rank(), i, call);
        ASSERT_EQ(braid_gather(send.data(), recv.data(), count, BRAID_INT32, root, comm.native()),
                  BRAID_SUCCESS)
            << braid_last_error();
        size_t wrong = 0;  // counted, not asserted: the others go on to the next call
        size_t first_wrong = recv.size();
        for (size_t i = 0; i < recv.size(); ++i)
          if (recv[i] != value(static_cast<int>(i / count), i % count, call) && wrong++ == 0)
            first_wrong = i;
        EXPECT_EQ(wrong, 0u) << "gather of " << count << " to " << root << ", call " << call
                             << ", first at " << first_wrong;
        const uint64_t now = comm.counters()["intranode_streamed_deposits"];
        if (rank() != root || count * sizeof(int32_t) < 262144 || !shm) {
          EXPECT_EQ(now, streamed) << "only a root's timed choice is counted";
        } else if (windows && call < 5) {
          EXPECT_EQ(now - streamed, call < 3 ? 1u : 0u)
              << "root " << root << ", call " << call + 1 << " of a fresh size";
        }
        streamed = now;
      }
    }
}

TEST(Streaming, AlltoallAndAllgatherAreExact) {
  const size_t n = static_cast<size_t>(size());
  for (size_t count : kStreamCounts) {
    uint64_t before = streamed_calls();
    uint64_t deposits = gauged_deposits();
    for (int call = 0; call < kStreamCalls; ++call) {
      std::vector<int32_t> send(count * n), recv(count * n, -1);
      for (size_t i = 0; i < send.size(); ++i) send[i] = value(rank(), i, call);
      ASSERT_EQ(braid_alltoall(send.data(), recv.data(), count, BRAID_INT32, world()),
                BRAID_SUCCESS)
          << braid_last_error();
      for (size_t s = 0; s < n; ++s)
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(recv[s * count + i],
                    value(static_cast<int>(s), static_cast<size_t>(rank()) * count + i, call))
              << "alltoall of " << count << " from rank " << s << " at " << i;
    }
    check_streamed(streamed_calls() - before, "BRAID_ALLTOALL_ALGO", kStreamCalls, true,
                   "alltoall of " + std::to_string(count));
    check_gauged(gauged_deposits() - deposits, "BRAID_ALLTOALL_ALGO", kStreamCalls,
                 "alltoall of " + std::to_string(count));
    before = streamed_calls();
    deposits = gauged_deposits();
    for (int call = 0; call < kStreamCalls; ++call) {
      std::vector<int32_t> send(count), recv(count * n, -1);
      for (size_t i = 0; i < count; ++i) send[i] = value(rank(), i, call);
      ASSERT_EQ(braid_allgather(send.data(), recv.data(), count, BRAID_INT32, world()),
                BRAID_SUCCESS)
          << braid_last_error();
      for (size_t s = 0; s < n; ++s)
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(recv[s * count + i], value(static_cast<int>(s), i, call))
              << "allgather of " << count << " from rank " << s << " at " << i;
    }
    check_streamed(streamed_calls() - before, "BRAID_ALLGATHER_ALGO", kStreamCalls, true,
                   "allgather of " + std::to_string(count));
    check_gauged(gauged_deposits() - deposits, "BRAID_ALLGATHER_ALGO", kStreamCalls,
                 "allgather of " + std::to_string(count));
  }
}

TEST(Streaming, GatherToEveryRootIsExact) {
  const size_t n = static_cast<size_t>(size());
  for (size_t count : kStreamCounts)
    for (int root = 0; root < size(); ++root) {
      const uint64_t before = streamed_calls();
      for (int call = 0; call < kStreamCalls; ++call) {
        std::vector<int32_t> send(count), recv(rank() == root ? count * n : 0, -1);
        for (size_t i = 0; i < count; ++i) send[i] = value(rank(), i, call);
        ASSERT_EQ(braid_gather(send.data(), recv.data(), count, BRAID_INT32, root, world()),
                  BRAID_SUCCESS)
            << braid_last_error();
        for (size_t i = 0; i < recv.size(); ++i)
          ASSERT_EQ(recv[i], value(static_cast<int>(i / count), i % count, call))
              << "gather of " << count << " to " << root << " at " << i;
      }
      check_streamed(streamed_calls() - before, "BRAID_GATHER_ALGO", kStreamCalls, rank() == root,
                     "gather of " + std::to_string(count) + " to " + std::to_string(root));
    }
}

TEST(Streaming, VariantsWithUnevenBlocksAreExact) {
  const size_t n = static_cast<size_t>(size());
  // Rank r sends and receives blocks of base + r * 1001 elements (rank 0's own block empty in
  // allgatherv, so a call with nothing of its own to copy still streams the rest).
  constexpr size_t base = 50001;
  auto block = [&](size_t r) { return r == 0 ? size_t{0} : base + r * 1001; };
  std::vector<size_t> counts(n), displs(n);
  size_t total = 0;
  for (size_t r = 0; r < n; ++r) {
    counts[r] = block(r);
    displs[r] = total + 1;  // a gap before each block
    total += 1 + counts[r];
  }
  uint64_t before = streamed_calls();
  uint64_t deposits = gauged_deposits();
  const size_t me = static_cast<size_t>(rank());
  for (int call = 0; call < kStreamCalls; ++call) {
    std::vector<int32_t> send(counts[me]), recv(total, -1);
    for (size_t i = 0; i < send.size(); ++i) send[i] = value(rank(), i, call);
    ASSERT_EQ(braid_allgatherv(send.data(), counts[me], recv.data(), counts.data(), displs.data(),
                               BRAID_INT32, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t s = 0; s < n; ++s)
      for (size_t i = 0; i < counts[s]; ++i)
        ASSERT_EQ(recv[displs[s] + i], value(static_cast<int>(s), i, call))
            << "allgatherv from rank " << s << " at " << i;
  }
  check_streamed(streamed_calls() - before, "BRAID_ALLGATHERV_ALGO", kStreamCalls, true,
                 "allgatherv");
  // Rank 0's block is empty: it deposits nothing.
  check_gauged(gauged_deposits() - deposits, "BRAID_ALLGATHERV_ALGO", kStreamCalls, "allgatherv",
               rank() != 0);
  // Alltoallv: rank r sends block(d) + r elements to rank d.
  before = streamed_calls();
  deposits = gauged_deposits();
  for (int call = 0; call < kStreamCalls; ++call) {
    std::vector<size_t> scounts(n), sdispls(n), rcounts(n), rdispls(n);
    size_t sent = 0, got = 0;
    for (size_t d = 0; d < n; ++d) {
      scounts[d] = base + d * 1001 + me;
      sdispls[d] = sent;
      sent += scounts[d];
      rcounts[d] = base + me * 1001 + d;
      rdispls[d] = got;
      got += rcounts[d];
    }
    std::vector<int32_t> send(sent), recv(got, -1);
    for (size_t i = 0; i < sent; ++i) send[i] = value(rank(), i, call);
    ASSERT_EQ(braid_alltoallv(send.data(), scounts.data(), sdispls.data(), recv.data(),
                              rcounts.data(), rdispls.data(), BRAID_INT32, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t s = 0; s < n; ++s) {
      // Where rank s's block for this rank starts in its send buffer.
      size_t at = 0;
      for (size_t d = 0; d < me; ++d) at += base + d * 1001 + s;
      for (size_t i = 0; i < rcounts[s]; ++i)
        ASSERT_EQ(recv[rdispls[s] + i], value(static_cast<int>(s), at + i, call))
            << "alltoallv from rank " << s << " at " << i;
    }
  }
  check_streamed(streamed_calls() - before, "BRAID_ALLTOALLV_ALGO", kStreamCalls, true,
                 "alltoallv");
  check_gauged(gauged_deposits() - deposits, "BRAID_ALLTOALLV_ALGO", kStreamCalls, "alltoallv");
}

}  // namespace
}  // namespace mp
