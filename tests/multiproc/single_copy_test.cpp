// Single copy through CMA for ordinary buffers (collectives/intranode/single_copy.hpp): readers
// copy straight out of a peer's buffer with process_vm_readv. Runs in every variant of the
// suite, checking the results everywhere; multiproc.*.cma_on (BRAID_CMA=on) makes the path
// taken wherever the node path is, and there the counter must say so, call by call. With
// BRAID_CMA=off (multiproc.*.cma_off) it must never move.
#include <braid/braid.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "rank_env.hpp"
#include "single_copy_checks.hpp"

namespace mp {
namespace {

// Sizes just past what travels with the call records (8224 bytes; single copy may start at 4
// KiB where the records do not carry the call), the mapped path's threshold (16 KiB), odd ones,
// and one past the windows' 256 KiB.
constexpr size_t kCounts[] = {2057, 2063, 4096, 65537, 100000};

TEST(SingleCopy, BroadcastFromEveryRootIsExact) {
  for (size_t count : kCounts)
    for (int root = 0; root < size(); ++root) {
      const uint64_t before = single_copy_calls();
      constexpr int kCalls = 4;
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int32_t> buf(count, -1);
        if (rank() == root)
          for (size_t i = 0; i < count; ++i) buf[i] = value(root, i, call);
        ASSERT_EQ(braid_broadcast(buf.data(), count, BRAID_INT32, root, world()), BRAID_SUCCESS)
            << braid_last_error();
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(buf[i], value(root, i, call))
              << "count " << count << " root " << root << " call " << call << " at " << i;
      }
      check_count(single_copy_calls() - before, "BRAID_BROADCAST_ALGO", kCalls, true,
                  "broadcast of " + std::to_string(count) + " from " + std::to_string(root));
    }
}

TEST(SingleCopy, ScatterFromEveryRootIsExact) {
  for (size_t count : kCounts)
    for (int root = 0; root < size(); ++root) {
      const uint64_t before = single_copy_calls();
      constexpr int kCalls = 4;
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int32_t> send;
        if (rank() == root) {
          send.resize(count * static_cast<size_t>(size()));
          for (size_t i = 0; i < send.size(); ++i) send[i] = value(root, i, call);
        }
        std::vector<int32_t> recv(count, -1);
        ASSERT_EQ(braid_scatter(send.data(), recv.data(), count, BRAID_INT32, root, world()),
                  BRAID_SUCCESS)
            << braid_last_error();
        const size_t first = count * static_cast<size_t>(rank());
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(recv[i], value(root, first + i, call)) << "count " << count << " root " << root;
      }
      check_count(single_copy_calls() - before, "BRAID_SCATTER_ALGO", kCalls, true,
                  "scatter of " + std::to_string(count) + " from " + std::to_string(root));
    }
}

TEST(SingleCopy, GatherToEveryRootIsExact) {
  // 300000 int32 (1.2 MB): every sender's wait is long (the root reads a MiB or more before it
  // is done with the sender's block): where ranks share cores the sender sleeps until the root
  // wakes it (Scheduler::wait).
  std::vector<size_t> counts(std::begin(kCounts), std::end(kCounts));
  counts.push_back(300000);
  for (size_t count : counts)
    for (int root = 0; root < size(); ++root) {
      const uint64_t before = single_copy_calls();
      constexpr int kCalls = 2;
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int32_t> send(count);
        for (size_t i = 0; i < count; ++i) send[i] = value(rank(), i, call);
        std::vector<int32_t> recv(rank() == root ? count * static_cast<size_t>(size()) : 0, -1);
        ASSERT_EQ(braid_gather(send.data(), recv.data(), count, BRAID_INT32, root, world()),
                  BRAID_SUCCESS)
            << braid_last_error();
        // A sender may reuse its buffer as soon as the call returns (each is released once the
        // root has read its block, not when the root has read them all): the root must have
        // its block by then.
        if (rank() != root) {
          std::fill(send.begin(), send.end(), -7);
          continue;
        }
        for (int r = 0; r < size(); ++r)
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(recv[static_cast<size_t>(r) * count + i], value(r, i, call))
                << "count " << count << " root " << root << " from " << r;
      }
      check_count(single_copy_calls() - before, "BRAID_GATHER_ALGO", kCalls, false,
                  "gather of " + std::to_string(count) + " to " + std::to_string(root));
    }
}

TEST(SingleCopy, AllgatherInPlaceAndNotIsExact) {
  for (size_t count : kCounts)
    for (bool in_place : {false, true}) {
      const uint64_t before = single_copy_calls();
      constexpr int kCalls = 2;
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int32_t> recv(count * static_cast<size_t>(size()), -1);
        std::vector<int32_t> send(count);
        for (size_t i = 0; i < count; ++i) send[i] = value(rank(), i, call);
        const void *src = send.data();
        if (in_place) {
          std::copy(send.begin(), send.end(), recv.begin() + static_cast<long>(count) * rank());
          src = recv.data() + count * static_cast<size_t>(rank());
        }
        ASSERT_EQ(braid_allgather(src, recv.data(), count, BRAID_INT32, world()), BRAID_SUCCESS)
            << braid_last_error();
        for (int r = 0; r < size(); ++r)
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(recv[static_cast<size_t>(r) * count + i], value(r, i, call))
                << "count " << count << " in place " << in_place << " from " << r;
      }
      check_count(single_copy_calls() - before, "BRAID_ALLGATHER_ALGO", kCalls, false,
                  "allgather of " + std::to_string(count));
    }
}

// Float sums whose rounding depends on the order: every rank computes the rank-order fold of
// everyone's inputs itself, and the node path (windows, in place or single copy) must give
// exactly those bits, in place or not.
TEST(SingleCopy, AllreduceGivesTheRankOrderBits) {
  for (size_t count : {size_t{4099}, size_t{65537}, size_t{300001}, size_t{1 << 20}}) {
    // Once per count: the fold takes every rank's inputs (ranks x count random draws).
    std::vector<float> expected = floats_of(0, count);
    for (int r = 1; r < size(); ++r) {
      const std::vector<float> x = floats_of(r, count);
      for (size_t i = 0; i < count; ++i) expected[i] = expected[i] + x[i];
    }
    const std::vector<float> input = floats_of(rank(), count);
    for (bool in_place : {false, true}) {
      uint64_t moved = 0;  // by the allreduces alone (the checks below broadcast)
      constexpr int kCalls = 2;
      for (int call = 0; call < kCalls; ++call) {
        std::vector<float> send = input, recv(count, 0.0f);
        const uint64_t before = single_copy_calls();
        ASSERT_EQ(braid_allreduce(send.data(), in_place ? send.data() : recv.data(), count,
                                  BRAID_FLOAT32, BRAID_SUM, world()),
                  BRAID_SUCCESS)
            << braid_last_error();
        moved += single_copy_calls() - before;
        const std::vector<float> &got = in_place ? send : recv;
        if (shm_selected("BRAID_ALLREDUCE_ALGO")) {
          ASSERT_EQ(std::memcmp(got.data(), expected.data(), count * sizeof(float)), 0)
              << "count " << count << " in place " << in_place;
          continue;
        }
        // Other algorithms (transport, hierarchical) add in their own order: the same bits on
        // every rank, close to the fold.
        ASSERT_TRUE(identical_on_all_ranks(got.data(), count * sizeof(float)));
        for (size_t i = 0; i < count; ++i)
          ASSERT_NEAR(got[i], expected[i], 1e-5 * size()) << "count " << count << " at " << i;
      }
      // Below kAllreduceSingleCopyMinBytes (256 KiB) allreduce never goes single-copy.
      const int eligible = count * sizeof(float) >= (size_t{256} << 10) ? kCalls : 0;
      check_count(moved, "BRAID_ALLREDUCE_ALGO", eligible, false,
                  "allreduce of " + std::to_string(count));
    }
  }
}

TEST(SingleCopy, AllreduceIntegerOpsAreExact) {
  constexpr size_t kCount = 50000;
  for (braid_op_t op : {BRAID_MAX, BRAID_BXOR, BRAID_AVG}) {
    std::vector<int32_t> send(kCount), recv(kCount);
    for (size_t i = 0; i < kCount; ++i) send[i] = int_input(rank(), i);
    ASSERT_EQ(braid_allreduce(send.data(), recv.data(), kCount, BRAID_INT32, op, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(recv[i], int_op_of_all(op, i)) << "op " << op_str(op) << " at " << i;
    }
  }
}

// Uneven blocks, one of them empty (its owner's buffer is null), the others around the
// threshold, in reversed places in the receive buffer.
TEST(SingleCopy, AllgathervUnevenBlocksAreExact) {
  const int n = size();
  for (size_t base : {size_t{2100}, size_t{20000}}) {
    std::vector<size_t> counts(static_cast<size_t>(n)), displs(static_cast<size_t>(n));
    size_t total = 0;
    for (int r = n - 1; r >= 0; --r) {  // rank n-1 first in the buffer
      counts[static_cast<size_t>(r)] = r == 1 ? 0 : base + static_cast<size_t>(r) * 1031;
      displs[static_cast<size_t>(r)] = total;
      total += counts[static_cast<size_t>(r)] + 3;  // gaps between blocks stay untouched
    }
    const uint64_t before = single_copy_calls();
    constexpr int kCalls = 2;
    for (int call = 0; call < kCalls; ++call) {
      const size_t mine = counts[static_cast<size_t>(rank())];
      std::vector<int32_t> send(mine);
      for (size_t i = 0; i < mine; ++i) send[i] = value(rank(), i, call);
      std::vector<int32_t> recv(total, -1);
      ASSERT_EQ(braid_allgatherv(mine ? send.data() : nullptr, mine, recv.data(), counts.data(),
                                 displs.data(), BRAID_INT32, world()),
                BRAID_SUCCESS)
          << braid_last_error();
      for (int r = 0; r < n; ++r) {
        const size_t at = displs[static_cast<size_t>(r)];
        for (size_t i = 0; i < counts[static_cast<size_t>(r)]; ++i)
          ASSERT_EQ(recv[at + i], value(r, i, call)) << "base " << base << " from " << r;
        ASSERT_EQ(recv[at + counts[static_cast<size_t>(r)]], -1) << "gap after " << r;
      }
    }
    check_count(single_copy_calls() - before, "BRAID_ALLGATHERV_ALGO", kCalls, false,
                "allgatherv of base " + std::to_string(base));
  }
}

TEST(SingleCopy, AlltoallInPlaceAndNotIsExact) {
  for (size_t count : kCounts)
    for (bool in_place : {false, true}) {
      const uint64_t before = single_copy_calls();
      constexpr int kCalls = 2;
      const size_t all = count * static_cast<size_t>(size());
      for (int call = 0; call < kCalls; ++call) {
        // Block d of rank r's send buffer, element i: value(r, d * count + i, call).
        std::vector<int32_t> send(all), recv(all, -1);
        for (size_t i = 0; i < all; ++i) send[i] = value(rank(), i, call);
        if (in_place) recv = send;
        ASSERT_EQ(braid_alltoall(in_place ? recv.data() : send.data(), recv.data(), count,
                                 BRAID_INT32, world()),
                  BRAID_SUCCESS)
            << braid_last_error();
        const size_t mine = count * static_cast<size_t>(rank());
        for (int r = 0; r < size(); ++r)
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(recv[static_cast<size_t>(r) * count + i], value(r, mine + i, call))
                << "count " << count << " in place " << in_place << " from " << r;
      }
      // In place never goes single-copy: each rank's blocks are overwritten while read.
      if (in_place) {
        EXPECT_EQ(single_copy_calls(), before) << "in-place alltoall of " << count;
      } else {
        check_count(single_copy_calls() - before, "BRAID_ALLTOALL_ALGO", kCalls, false,
                    "alltoall of " + std::to_string(count));
      }
    }
}

// Uneven blocks in reversed places, with gaps, one pair empty (rank 1 sends rank 0 nothing, so
// at 2 ranks rank 0 reads nothing and must not keep the others from single copy), sizes below
// and above the threshold.
TEST(SingleCopy, AlltoallvUnevenBlocksAreExact) {
  const int n = size();
  const auto un = static_cast<size_t>(n);
  // Elements rank r sends rank d.
  auto count_of = [](size_t base, int r, int d) {
    return r == 1 && d == 0 ? size_t{0} : base + static_cast<size_t>(257 * r + 31 * d);
  };
  for (size_t base : {size_t{300}, size_t{2100}, size_t{20000}}) {
    const int me = rank();
    std::vector<size_t> scounts(un), sdispls(un), rcounts(un), rdispls(un);
    size_t stotal = 0, rtotal = 0;
    for (int d = n - 1; d >= 0; --d) {  // the block for rank n-1 first, a gap after each
      scounts[static_cast<size_t>(d)] = count_of(base, me, d);
      sdispls[static_cast<size_t>(d)] = stotal;
      stotal += scounts[static_cast<size_t>(d)] + 2;
      rcounts[static_cast<size_t>(d)] = count_of(base, d, me);
      rdispls[static_cast<size_t>(d)] = rtotal;
      rtotal += rcounts[static_cast<size_t>(d)] + 3;
    }
    const uint64_t before = single_copy_calls();
    constexpr int kCalls = 2;
    for (int call = 0; call < kCalls; ++call) {
      // Element i of the block for rank d: value(me, d * 1000000 + i, call).
      std::vector<int32_t> send(stotal, -2), recv(rtotal, -1);
      for (int d = 0; d < n; ++d)
        for (size_t i = 0; i < scounts[static_cast<size_t>(d)]; ++i)
          send[sdispls[static_cast<size_t>(d)] + i] =
              value(me, static_cast<size_t>(d) * 1000000 + i, call);
      ASSERT_EQ(braid_alltoallv(send.data(), scounts.data(), sdispls.data(), recv.data(),
                                rcounts.data(), rdispls.data(), BRAID_INT32, world()),
                BRAID_SUCCESS)
          << braid_last_error();
      for (int s = 0; s < n; ++s) {
        const size_t at = rdispls[static_cast<size_t>(s)], c = rcounts[static_cast<size_t>(s)];
        for (size_t i = 0; i < c; ++i)
          ASSERT_EQ(recv[at + i], value(s, static_cast<size_t>(me) * 1000000 + i, call))
              << "base " << base << " from " << s << " at " << i;
        ASSERT_EQ(recv[at + c], -1) << "gap after the block from " << s;
      }
    }
    // Single copy when every rank reads at least 4 KiB from some peer.
    check_count(single_copy_calls() - before, "BRAID_ALLTOALLV_ALGO", base >= 2100 ? kCalls : 0,
                false, "alltoallv of base " + std::to_string(base));
  }
}

// Non-blocking calls of several kinds in flight at once, each reading another's result only
// after waiting: the single-copy path keeps the node's call order and window sequence.
TEST(SingleCopy, NonBlockingCallsInFlightTogether) {
  constexpr size_t kCount = 20000;
  std::vector<int32_t> a(kCount), b(kCount * static_cast<size_t>(size()));
  std::vector<int32_t> mine(kCount);
  for (size_t i = 0; i < kCount; ++i) mine[i] = value(rank(), i, 5);
  for (int round = 0; round < 3; ++round) {
    if (rank() == 0)
      for (size_t i = 0; i < kCount; ++i) a[i] = value(0, i, round);
    braid_request_t r1 = nullptr, r2 = nullptr;
    ASSERT_EQ(braid_ibroadcast(a.data(), kCount, BRAID_INT32, 0, world(), &r1), BRAID_SUCCESS);
    ASSERT_EQ(braid_iallgather(mine.data(), b.data(), kCount, BRAID_INT32, world(), &r2),
              BRAID_SUCCESS);
    ASSERT_EQ(braid_wait(&r2), BRAID_SUCCESS) << braid_last_error();
    ASSERT_EQ(braid_wait(&r1), BRAID_SUCCESS) << braid_last_error();
    for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(a[i], value(0, i, round)) << i;
    for (int r = 0; r < size(); ++r)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(b[static_cast<size_t>(r) * kCount + i], value(r, i, 5)) << r << " " << i;
  }
}

}  // namespace
}  // namespace mp
