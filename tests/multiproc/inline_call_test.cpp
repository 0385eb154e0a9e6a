// Small blocking calls of ranks sharing a node complete in the calling thread
// (collectives/intranode/inline_call.hpp), or are handed to the algorithm's coroutine when a
// peer is late. Either way the results must be the coroutine path's, for every kind of small
// call and every root; non-blocking calls never complete inline. Runs in every variant of the
// suite: where the node path is not selected the results are checked all the same and the
// inline counter must stay put.
#include <braid/braid.hpp>

#include <chrono>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

uint64_t inline_calls() {
  return braid::Comm(world()).counters()["intranode_inline_calls"];
}

bool inline_enabled() {
  const char *v = std::getenv("BRAID_INLINE");
  return v == nullptr || std::string(v) != "off";
}

// Every rank but `first` sleeps before the call when `late`, so `first` gives up waiting for
// the others' records and hands the call over (a few microseconds of polls against 3 ms).
void arrive(bool late, int first) {
  if (late && rank() != first) std::this_thread::sleep_for(std::chrono::milliseconds(3));
}

// Element i of rank r's data: distinct across ranks and positions.
int32_t value(int r, size_t i) {
  return static_cast<int32_t>(1000 * r + static_cast<int>(i));
}

void every_kind_at(int root, bool late) {
  const int n = size(), me = rank();
  const size_t k = 3;  // elements per vector or block: all of it fits in a call record
  SCOPED_TRACE("root " + std::to_string(root) + (late ? ", late peers" : ", peers on time"));
  std::vector<int32_t> mine(k), all_blocks(k * static_cast<size_t>(n));
  for (size_t i = 0; i < k; ++i) mine[i] = value(me, i);
  for (int d = 0; d < n; ++d)  // alltoall/scatter/reduce_scatter input: block d goes to rank d
    for (size_t i = 0; i < k; ++i) all_blocks[static_cast<size_t>(d) * k + i] = value(me, i) + d;
  auto sum_over_ranks = [&](size_t i, int plus) {
    int32_t s = 0;
    for (int r = 0; r < n; ++r) s += value(r, i) + plus;
    return s;
  };

  std::vector<int32_t> out(k, -1);
  arrive(late, root);
  ASSERT_EQ(braid_allreduce(mine.data(), out.data(), k, BRAID_INT32, BRAID_SUM, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (size_t i = 0; i < k; ++i) EXPECT_EQ(out[i], sum_over_ranks(i, 0)) << "allreduce " << i;

  std::vector<int32_t> buf = me == root ? mine : std::vector<int32_t>(k, -1);
  arrive(late, root);
  ASSERT_EQ(braid_broadcast(buf.data(), k, BRAID_INT32, root, world()), BRAID_SUCCESS)
      << braid_last_error();
  for (size_t i = 0; i < k; ++i) EXPECT_EQ(buf[i], value(root, i)) << "broadcast " << i;

  std::fill(out.begin(), out.end(), -1);
  arrive(late, root);
  ASSERT_EQ(braid_reduce(mine.data(), out.data(), k, BRAID_INT32, BRAID_SUM, root, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (size_t i = 0; me == root && i < k; ++i)
    EXPECT_EQ(out[i], sum_over_ranks(i, 0)) << "reduce " << i;

  std::vector<int32_t> gathered(k * static_cast<size_t>(n), -1);
  arrive(late, root);
  ASSERT_EQ(braid_gather(mine.data(), gathered.data(), k, BRAID_INT32, root, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int r = 0; me == root && r < n; ++r)
    for (size_t i = 0; i < k; ++i)
      EXPECT_EQ(gathered[static_cast<size_t>(r) * k + i], value(r, i)) << "gather " << r;

  std::fill(out.begin(), out.end(), -1);
  arrive(late, root);
  ASSERT_EQ(braid_scatter(all_blocks.data(), out.data(), k, BRAID_INT32, root, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (size_t i = 0; i < k; ++i) EXPECT_EQ(out[i], value(root, i) + me) << "scatter " << i;

  std::fill(gathered.begin(), gathered.end(), -1);
  arrive(late, root);
  ASSERT_EQ(braid_allgather(mine.data(), gathered.data(), k, BRAID_INT32, world()), BRAID_SUCCESS)
      << braid_last_error();
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < k; ++i)
      EXPECT_EQ(gathered[static_cast<size_t>(r) * k + i], value(r, i)) << "allgather " << r;

  std::vector<int32_t> exchanged(k * static_cast<size_t>(n), -1);
  arrive(late, root);
  ASSERT_EQ(braid_alltoall(all_blocks.data(), exchanged.data(), k, BRAID_INT32, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < k; ++i)
      EXPECT_EQ(exchanged[static_cast<size_t>(r) * k + i], value(r, i) + me) << "alltoall " << r;

  std::fill(out.begin(), out.end(), -1);
  arrive(late, root);
  ASSERT_EQ(braid_reduce_scatter(all_blocks.data(), out.data(), k, BRAID_INT32, BRAID_SUM, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (size_t i = 0; i < k; ++i) EXPECT_EQ(out[i], sum_over_ranks(i, me)) << "reduce_scatter";

  // allgatherv: rank r sends r + 1 elements, placed after a gap of one.
  const auto un = static_cast<size_t>(n);
  std::vector<size_t> counts(un), displs(un);
  for (size_t r = 0, at = 0; r < un; at += r + 2, ++r) {
    counts[r] = r + 1;
    displs[r] = at;
  }
  std::vector<int32_t> varied(displs[un - 1] + un + 1, -1), own(static_cast<size_t>(me) + 1);
  for (size_t i = 0; i < own.size(); ++i) own[i] = value(me, i);
  arrive(late, root);
  ASSERT_EQ(braid_allgatherv(own.data(), own.size(), varied.data(), counts.data(), displs.data(),
                             BRAID_INT32, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < counts[static_cast<size_t>(r)]; ++i)
      EXPECT_EQ(varied[displs[static_cast<size_t>(r)] + i], value(r, i)) << "allgatherv " << r;

  // alltoallv: rank s sends (s + d) % 3 elements to rank d, packed in rank order.
  auto pair = [](int s, int d) { return static_cast<size_t>((s + d) % 3); };
  std::vector<size_t> sc(un), sd(un), rc(un), rd(un);
  size_t send_total = 0, recv_total = 0;
  for (int d = 0; d < n; ++d) {
    const auto u = static_cast<size_t>(d);
    sc[u] = pair(me, d);
    sd[u] = send_total;
    send_total += sc[u];
    rc[u] = pair(d, me);
    rd[u] = recv_total;
    recv_total += rc[u];
  }
  std::vector<int32_t> vs(send_total + 1), vr(recv_total + 1, -1);
  for (int d = 0; d < n; ++d)
    for (size_t i = 0; i < sc[static_cast<size_t>(d)]; ++i)
      vs[sd[static_cast<size_t>(d)] + i] = value(me, i) + d;
  arrive(late, root);
  ASSERT_EQ(braid_alltoallv(vs.data(), sc.data(), sd.data(), vr.data(), rc.data(), rd.data(),
                            BRAID_INT32, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int s = 0; s < n; ++s)
    for (size_t i = 0; i < rc[static_cast<size_t>(s)]; ++i)
      EXPECT_EQ(vr[rd[static_cast<size_t>(s)] + i], value(s, i) + me) << "alltoallv from " << s;

  arrive(late, root);
  ASSERT_EQ(braid_barrier(world()), BRAID_SUCCESS) << braid_last_error();
}

TEST(InlineCalls, EverySmallKindGivesTheCoroutinePathsResultsOnTimeOrLate) {
  for (bool late : {false, true})
    for (int root = 0; root < size(); ++root) every_kind_at(root, late);
}

TEST(InlineCalls, OnlyBlockingNodeLocalCallsCompleteInline) {
  const bool expected = inline_enabled() && shm_selected("BRAID_ALLREDUCE_ALGO");
  int32_t v = 1;
  uint64_t before = inline_calls();
  // Back to back: the rank that arrives last finds every record there and completes inline,
  // whatever the spin budget (none when ranks share cores).
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(braid_allreduce(&v, &v, 1, BRAID_INT32, BRAID_MAX, world()), BRAID_SUCCESS);
  const uint64_t blocking = inline_calls() - before;
  EXPECT_LE(blocking, 200u);
  // Which ranks complete inline depends on who arrives last; in every call, whoever arrives
  // last finds all the records there.
  uint64_t everywhere = blocking;
  ASSERT_EQ(braid_allreduce(&everywhere, &everywhere, 1, BRAID_UINT64, BRAID_SUM, world()),
            BRAID_SUCCESS);
  if (expected)
    EXPECT_GT(everywhere, 0u);
  else
    EXPECT_EQ(everywhere, 0u);
  before = inline_calls();
  for (int i = 0; i < 50; ++i) {
    braid_request_t req = nullptr;
    ASSERT_EQ(braid_iallreduce(&v, &v, 1, BRAID_INT32, BRAID_MAX, world(), &req), BRAID_SUCCESS);
    ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  }
  EXPECT_EQ(inline_calls(), before);
  EXPECT_EQ(v, 1);
}

// BRAID_AVG divides once whichever path completes the call, and the in-place forms read their
// own contribution before the result overwrites it.
TEST(InlineCalls, AverageAndInPlaceForms) {
  const int n = size(), me = rank();
  for (bool late : {false, true}) {
    SCOPED_TRACE(late ? "late peers" : "peers on time");
    std::vector<int32_t> v = {10 * me, 10 * me + 7, -10 * me};
    arrive(late, 0);
    ASSERT_EQ(braid_allreduce(v.data(), v.data(), v.size(), BRAID_INT32, BRAID_AVG, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    const int32_t sum = 10 * n * (n - 1) / 2;
    EXPECT_EQ(v[0], sum / n);
    EXPECT_EQ(v[1], (sum + 7 * n) / n);
    EXPECT_EQ(v[2], -sum / n);  // truncated toward zero

    const int root = n - 1;
    std::vector<int32_t> r = {me + 1, 2 * me};
    arrive(late, root);
    ASSERT_EQ(braid_reduce(r.data(), me == root ? r.data() : nullptr, r.size(), BRAID_INT32,
                           BRAID_SUM, root, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    if (me == root) {
      EXPECT_EQ(r[0], n * (n + 1) / 2);
      EXPECT_EQ(r[1], n * (n - 1));
    }

    const auto un = static_cast<size_t>(n), k = size_t{2};
    std::vector<int32_t> all(k * un, -1);  // allgather in place: my block already there
    for (size_t i = 0; i < k; ++i) all[static_cast<size_t>(me) * k + i] = value(me, i);
    arrive(late, 0);
    ASSERT_EQ(braid_allgather(all.data() + static_cast<size_t>(me) * k, all.data(), k, BRAID_INT32,
                              world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (int q = 0; q < n; ++q)
      for (size_t i = 0; i < k; ++i)
        EXPECT_EQ(all[static_cast<size_t>(q) * k + i], value(q, i)) << "allgather " << q;

    std::vector<int32_t> x(k * un);  // alltoall in place
    for (int d = 0; d < n; ++d)
      for (size_t i = 0; i < k; ++i) x[static_cast<size_t>(d) * k + i] = value(me, i) + d;
    arrive(late, 0);
    ASSERT_EQ(braid_alltoall(x.data(), x.data(), k, BRAID_INT32, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (int q = 0; q < n; ++q)
      for (size_t i = 0; i < k; ++i)
        EXPECT_EQ(x[static_cast<size_t>(q) * k + i], value(q, i) + me) << "alltoall " << q;

    std::vector<int32_t> rs(k * un);  // reduce_scatter in place: my block of sendbuf
    for (int d = 0; d < n; ++d)
      for (size_t i = 0; i < k; ++i) rs[static_cast<size_t>(d) * k + i] = me + d;
    int32_t *mine = rs.data() + static_cast<size_t>(me) * k;
    arrive(late, 0);
    ASSERT_EQ(braid_reduce_scatter(rs.data(), mine, k, BRAID_INT32, BRAID_AVG, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t i = 0; i < k; ++i) EXPECT_EQ(mine[i], (n * (n - 1) / 2 + n * me) / n);
  }
}

// An alltoallv whose blocks do not fit the records: every rank learns it from the records and
// the call walks the windows, whether it was attempted inline or handed over by a rank whose
// peers were late.
TEST(InlineCalls, AlltoallvTooLargeForTheRecordsWalksTheWindows) {
  const int n = size(), me = rank();
  const auto un = static_cast<size_t>(n);
  const size_t k = 2100;  // 8400 bytes to each rank: more than a record holds (8224)
  for (bool late : {false, true}) {
    std::vector<size_t> counts(un, k), displs(un);
    for (size_t d = 0; d < un; ++d) displs[d] = d * k;
    std::vector<int32_t> send(k * un), recv(k * un, -1);
    for (int d = 0; d < n; ++d)
      for (size_t i = 0; i < k; ++i) send[static_cast<size_t>(d) * k + i] = value(me, i) + d;
    arrive(late, 0);
    ASSERT_EQ(braid_alltoallv(send.data(), counts.data(), displs.data(), recv.data(), counts.data(),
                              displs.data(), BRAID_INT32, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (int q = 0; q < n; ++q)
      for (size_t i = 0; i < k; ++i)
        ASSERT_EQ(recv[static_cast<size_t>(q) * k + i], value(q, i) + me)
            << "from " << q << (late ? ", late peers" : "");
  }
}

// A non-blocking call in flight keeps the next blocking one off the inline path (the node's
// turns are taken in call order), and both still complete with the right results.
TEST(InlineCalls, ABlockingCallBehindANonBlockingOneWaitsItsTurn) {
  int32_t a = rank(), b = 10 * rank();
  braid_request_t req = nullptr;
  ASSERT_EQ(braid_iallreduce(&a, &a, 1, BRAID_INT32, BRAID_SUM, world(), &req), BRAID_SUCCESS);
  ASSERT_EQ(braid_allreduce(&b, &b, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS)
      << braid_last_error();
  ASSERT_EQ(braid_wait(&req), BRAID_SUCCESS) << braid_last_error();
  const int n = size();
  EXPECT_EQ(a, n * (n - 1) / 2);
  EXPECT_EQ(b, 10 * n * (n - 1) / 2);
}

}  // namespace
}  // namespace mp
