// Every collective on a child communicator whose ranks differ from the world's: the world
// split by parity with reversed keys (child rank 0 is the class's highest world rank). Roots,
// counts and displacements are child ranks; every expected value is computed from the world
// ranks the test assigned, so a collective that used world ranks, or mixed the two halves'
// messages, gets wrong data.
#include <algorithm>
#include <numeric>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

struct Child {
  braid_comm_t c = nullptr;
  std::vector<int> members;  // world rank of each child rank
  int me = 0;                // this rank's child rank
  int n = 0;
  ~Child() {
    if (c != nullptr) braid_comm_free(&c);
  }
};

// Element i of what world rank w sends with tag t: distinct for every (w, t, i).
int32_t val(int w, int t, int i) {
  return w * 10000 + t * 100 + i;
}

void make_child(Child *ch) {
  ASSERT_EQ(braid_comm_split(world(), rank() % 2, -rank(), &ch->c), BRAID_SUCCESS)
      << braid_last_error();
  for (int r = size() - 1; r >= 0; --r)
    if (r % 2 == rank() % 2) ch->members.push_back(r);
  ch->n = static_cast<int>(ch->members.size());
  ch->me = static_cast<int>(std::find(ch->members.begin(), ch->members.end(), rank()) -
                            ch->members.begin());
  ASSERT_EQ(braid_comm_size(ch->c), ch->n);
  ASSERT_EQ(braid_comm_rank(ch->c), ch->me);
}

TEST(CommCollectives, ReduceGatherScatterAtEveryChildRoot) {
  Child ch;
  ASSERT_NO_FATAL_FAILURE(make_child(&ch));
  const int k = 5;
  for (int root = 0; root < ch.n; ++root) {
    std::vector<int32_t> send(k), recv(k, -1);
    for (int i = 0; i < k; ++i) send[static_cast<size_t>(i)] = val(rank(), root, i);
    ASSERT_EQ(braid_reduce(send.data(), recv.data(), k, BRAID_INT32, BRAID_SUM, root, ch.c),
              BRAID_SUCCESS)
        << braid_last_error();
    if (ch.me == root)
      for (int i = 0; i < k; ++i) {
        int32_t sum = 0;
        for (int w : ch.members) sum += val(w, root, i);
        ASSERT_EQ(recv[static_cast<size_t>(i)], sum) << "reduce to child root " << root;
      }

    std::vector<int32_t> all(static_cast<size_t>(k * ch.n), -1);
    ASSERT_EQ(braid_gather(send.data(), all.data(), k, BRAID_INT32, root, ch.c), BRAID_SUCCESS)
        << braid_last_error();
    if (ch.me == root) {
      for (int s = 0; s < ch.n; ++s)
        for (int i = 0; i < k; ++i)
          ASSERT_EQ(all[static_cast<size_t>(s * k + i)],
                    val(ch.members[static_cast<size_t>(s)], root, i))
              << "gather to child root " << root << ", block " << s;
    }

    // The root sends block r to child rank r.
    std::vector<int32_t> blocks(static_cast<size_t>(k * ch.n)), mine(k, -1);
    for (int r = 0; r < ch.n; ++r)
      for (int i = 0; i < k; ++i) blocks[static_cast<size_t>(r * k + i)] = val(rank(), r, i);
    ASSERT_EQ(braid_scatter(blocks.data(), mine.data(), k, BRAID_INT32, root, ch.c), BRAID_SUCCESS)
        << braid_last_error();
    for (int i = 0; i < k; ++i)
      ASSERT_EQ(mine[static_cast<size_t>(i)], val(ch.members[static_cast<size_t>(root)], ch.me, i))
          << "scatter from child root " << root;
  }
}

// Gather and scatter in place at the root (braid.h): the root's block already sits in its
// place of the full buffer, and stays as it is; small blocks (with the call records) and large
// ones, at every root.
TEST(CommCollectives, GatherAndScatterInPlaceAtTheRoot) {
  const int n = size();
  for (const size_t k : {size_t{3}, size_t{40000}}) {
    for (int root = 0; root < n; ++root) {
      std::vector<int32_t> mine(k), all(k * static_cast<size_t>(n), -1);
      for (size_t i = 0; i < k; ++i) mine[i] = val(rank(), root, static_cast<int>(i % 1000));
      int32_t *own = all.data() + static_cast<size_t>(root) * k;
      if (rank() == root) std::copy(mine.begin(), mine.end(), own);
      ASSERT_EQ(braid_gather(rank() == root ? own : mine.data(), all.data(), k, BRAID_INT32, root,
                             world()),
                BRAID_SUCCESS)
          << braid_last_error();
      for (int s = 0; s < n && rank() == root; ++s)
        for (size_t i = 0; i < k; i += 97)
          ASSERT_EQ(all[static_cast<size_t>(s) * k + i], val(s, root, static_cast<int>(i % 1000)))
              << "gather at root " << root << ", block " << s << ", k " << k;
      // Scatter back what the root gathered: every rank gets its own block again.
      std::vector<int32_t> back(k, -1);
      ASSERT_EQ(braid_scatter(all.data(), rank() == root ? own : back.data(), k, BRAID_INT32, root,
                              world()),
                BRAID_SUCCESS)
          << braid_last_error();
      const int32_t *got = rank() == root ? own : back.data();
      for (size_t i = 0; i < k; i += 97)
        ASSERT_EQ(got[i], val(rank(), root, static_cast<int>(i % 1000)))
            << "scatter at root " << root << ", k " << k;
    }
  }
}

TEST(CommCollectives, AllgatherAndUnevenAllgatherv) {
  Child ch;
  ASSERT_NO_FATAL_FAILURE(make_child(&ch));
  const int k = 3;
  std::vector<int32_t> send(k + ch.n), all(static_cast<size_t>(k * ch.n), -1);
  for (int i = 0; i < k + ch.n; ++i) send[static_cast<size_t>(i)] = val(rank(), 0, i);
  ASSERT_EQ(braid_allgather(send.data(), all.data(), k, BRAID_INT32, ch.c), BRAID_SUCCESS)
      << braid_last_error();
  for (int s = 0; s < ch.n; ++s)
    for (int i = 0; i < k; ++i)
      ASSERT_EQ(all[static_cast<size_t>(s * k + i)], val(ch.members[static_cast<size_t>(s)], 0, i))
          << "allgather block " << s;

  // Child rank r sends r elements (rank 0 none), into blocks one element apart.
  std::vector<size_t> counts(static_cast<size_t>(ch.n)), displs(static_cast<size_t>(ch.n));
  size_t at = 0;
  for (int r = 0; r < ch.n; ++r) {
    counts[static_cast<size_t>(r)] = static_cast<size_t>(r);
    displs[static_cast<size_t>(r)] = at;
    at += static_cast<size_t>(r) + 1;
  }
  std::vector<int32_t> v(at + 1, -1);
  ASSERT_EQ(braid_allgatherv(send.data(), counts[static_cast<size_t>(ch.me)], v.data(),
                             counts.data(), displs.data(), BRAID_INT32, ch.c),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int s = 0; s < ch.n; ++s) {
    const size_t d = displs[static_cast<size_t>(s)];
    for (int i = 0; i < s; ++i)
      ASSERT_EQ(v[d + static_cast<size_t>(i)], val(ch.members[static_cast<size_t>(s)], 0, i))
          << "allgatherv block " << s;
    ASSERT_EQ(v[d + static_cast<size_t>(s)], -1) << "the gap after allgatherv block " << s;
  }
  // Nothing from anyone, NULL buffers: every rank still takes part (a rank that expected
  // nothing must be able to tell one that sends it something), and the child stays in step.
  const std::vector<size_t> none(static_cast<size_t>(ch.n), 0);
  ASSERT_EQ(braid_allgatherv(nullptr, 0, nullptr, none.data(), none.data(), BRAID_INT32, ch.c),
            BRAID_SUCCESS)
      << braid_last_error();
  int32_t one = 1;
  ASSERT_EQ(braid_allreduce(&one, &one, 1, BRAID_INT32, BRAID_SUM, ch.c), BRAID_SUCCESS)
      << braid_last_error();
  EXPECT_EQ(one, ch.n);
}

TEST(CommCollectives, ReduceScatterAlltoallAndUnevenAlltoallv) {
  Child ch;
  ASSERT_NO_FATAL_FAILURE(make_child(&ch));
  const int k = 2;
  const auto n = static_cast<size_t>(ch.n);
  // reduce_scatter: child rank r gets the sum of every member's block r.
  std::vector<int32_t> send(n * k), mine(k, -1);
  for (int j = 0; j < ch.n * k; ++j) send[static_cast<size_t>(j)] = val(rank(), 1, j);
  ASSERT_EQ(braid_reduce_scatter(send.data(), mine.data(), k, BRAID_INT32, BRAID_SUM, ch.c),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int i = 0; i < k; ++i) {
    int32_t sum = 0;
    for (int w : ch.members) sum += val(w, 1, ch.me * k + i);
    ASSERT_EQ(mine[static_cast<size_t>(i)], sum) << "reduce_scatter element " << i;
  }

  // alltoall: block r of the send buffer goes to child rank r.
  std::vector<int32_t> out(n * k), in(n * k, -1);
  for (int r = 0; r < ch.n; ++r)
    for (int i = 0; i < k; ++i) out[static_cast<size_t>(r * k + i)] = val(rank(), r, i);
  ASSERT_EQ(braid_alltoall(out.data(), in.data(), k, BRAID_INT32, ch.c), BRAID_SUCCESS)
      << braid_last_error();
  for (int s = 0; s < ch.n; ++s)
    for (int i = 0; i < k; ++i)
      ASSERT_EQ(in[static_cast<size_t>(s * k + i)],
                val(ch.members[static_cast<size_t>(s)], ch.me, i))
          << "alltoall block from child rank " << s;

  // alltoallv: child rank s sends (s + 2r) % 3 elements to child rank r (some none), the
  // blocks one element apart on the send side and two on the receive side.
  auto cnt = [](int s, int r) { return static_cast<size_t>((s + 2 * r) % 3); };
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t sat = 0, rat = 0;
  for (int r = 0; r < ch.n; ++r) {
    sc[static_cast<size_t>(r)] = cnt(ch.me, r);
    sd[static_cast<size_t>(r)] = sat;
    sat += sc[static_cast<size_t>(r)] + 1;
    rc[static_cast<size_t>(r)] = cnt(r, ch.me);
    rd[static_cast<size_t>(r)] = rat;
    rat += rc[static_cast<size_t>(r)] + 2;
  }
  std::vector<int32_t> vout(sat + 1, 0), vin(rat + 1, -1);
  for (int r = 0; r < ch.n; ++r)
    for (size_t i = 0; i < sc[static_cast<size_t>(r)]; ++i)
      vout[sd[static_cast<size_t>(r)] + i] = val(rank(), r, static_cast<int>(i));
  ASSERT_EQ(braid_alltoallv(vout.data(), sc.data(), sd.data(), vin.data(), rc.data(), rd.data(),
                            BRAID_INT32, ch.c),
            BRAID_SUCCESS)
      << braid_last_error();
  for (int s = 0; s < ch.n; ++s) {
    const size_t d = rd[static_cast<size_t>(s)], c = rc[static_cast<size_t>(s)];
    for (size_t i = 0; i < c; ++i)
      ASSERT_EQ(vin[d + i], val(ch.members[static_cast<size_t>(s)], ch.me, static_cast<int>(i)))
          << "alltoallv block from child rank " << s;
    ASSERT_EQ(vin[d + c], -1) << "the gap after alltoallv block " << s;
  }
}

}  // namespace
}  // namespace mp
