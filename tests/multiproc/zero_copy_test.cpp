// Collectives on braid_mem_alloc buffers: ranks sharing a node work on each other's buffers in
// place (collectives/intranode/direct.hpp). The results must be the very bits the windowed
// path gives for the same data, and every other layout (some ranks' buffers private, offsets
// inside a region, many regions, in place) must still be exact. Runs in every variant of the
// suite; where the direct path cannot be used (intranode off, fake nodes, a forced algorithm)
// the same checks cover the fallback and the zero-copy counter must stay put.
#include <braid/braid.hpp>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

uint64_t zero_copy_calls() {
  return braid::Comm(world()).counters()["intranode_zero_copy_calls"];
}

// braid_mem_alloc'ed bytes, freed at scope exit.
struct Shared {
  explicit Shared(size_t bytes) {
    EXPECT_EQ(braid_mem_alloc(bytes, BRAID_NUMA_LOCAL, &p), BRAID_SUCCESS) << braid_last_error();
  }
  ~Shared() { braid_mem_free(p); }
  Shared(const Shared &) = delete;
  Shared &operator=(const Shared &) = delete;
  char *data() const { return static_cast<char *>(p); }
  void *p = nullptr;
};

std::vector<float> random_floats(size_t count, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v) x = d(g);
  return v;
}

// Float sums whose rounding depends on the order: the in-place result must equal, bit for
// bit, the result through ordinary (private) buffers, on every rank.
TEST(ZeroCopy, AllreduceGivesTheSameBitsAsTheWindowedPath) {
  for (size_t count : {size_t{4096}, size_t{4099}, size_t{65537}, size_t{(1u << 20) + 3}}) {
    const std::vector<float> in = random_floats(count, 77u + static_cast<unsigned>(rank()));
    std::vector<float> reference(count);
    ASSERT_EQ(
        braid_allreduce(in.data(), reference.data(), count, BRAID_FLOAT32, BRAID_SUM, world()),
        BRAID_SUCCESS)
        << braid_last_error();
    const size_t bytes = count * sizeof(float);
    Shared send(bytes), recv(bytes);
    std::memcpy(send.data(), in.data(), bytes);
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(braid_allreduce(send.data(), recv.data(), count, BRAID_FLOAT32, BRAID_SUM, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    EXPECT_EQ(std::memcmp(recv.data(), reference.data(), bytes), 0) << "count " << count;
    EXPECT_EQ(std::memcmp(send.data(), in.data(), bytes), 0) << "input changed, count " << count;
    // In place on the same region.
    ASSERT_EQ(braid_allreduce(send.data(), send.data(), count, BRAID_FLOAT32, BRAID_SUM, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    EXPECT_EQ(std::memcmp(send.data(), reference.data(), bytes), 0) << "in place, count " << count;
    EXPECT_TRUE(identical_on_all_ranks(recv.data(), bytes));
    EXPECT_EQ(zero_copy_calls() - before, shm_selected("BRAID_ALLREDUCE_ALGO") ? 2u : 0u)
        << "count " << count;
  }
}

// Every dtype and op, buffers at odd offsets inside larger regions, a count no rank count
// divides.
TEST(ZeroCopy, EveryDtypeAndOpAtOffsetsInsideRegions) {
  for (braid_dtype_t dt : kAllDtypes)
    for (braid_op_t op : kAllOps) {
      const size_t es = elem_size(dt);
      const size_t count = (size_t{40} << 10) / es + 7;
      Shared region(count * es * 2 + 3 * 4096);
      char *send = region.data() + 4096 + es;  // element-aligned, not page-aligned
      char *recv = send + count * es + 4096;
      std::vector<unsigned char> expected(count * es);
      for (size_t i = 0; i < count; ++i) {
        store(dt, send, i, input_value(dt, op, rank(), i));
        int64_t acc = alone(op, input_value(dt, op, 0, i));
        for (int r = 1; r < size(); ++r) acc = combine(op, acc, input_value(dt, op, r, i));
        store(dt, expected.data(), i, acc);
      }
      ASSERT_EQ(braid_allreduce(send, recv, count, dt, op, world()), BRAID_SUCCESS)
          << braid_last_error();
      EXPECT_EQ(std::memcmp(recv, expected.data(), count * es), 0)
          << dtype_str(dt) << " " << op_str(op);
      if (HasFailure()) return;
    }
}

// Some ranks' buffers are ordinary memory: nobody goes direct, and the result is still exact.
TEST(ZeroCopy, MixedBuffersFallBackTogether) {
  const size_t count = size_t{100000};
  const size_t bytes = count * sizeof(int32_t);
  Shared shared_send(bytes), shared_recv(bytes);
  std::vector<int32_t> private_send(count), private_recv(count);
  const bool mine_shared = rank() % 2 == 0;
  auto *send = mine_shared ? reinterpret_cast<int32_t *>(shared_send.data()) : private_send.data();
  auto *recv = mine_shared ? reinterpret_cast<int32_t *>(shared_recv.data()) : private_recv.data();
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<int32_t>(i % 1000) + rank();
  const uint64_t before = zero_copy_calls();
  ASSERT_EQ(braid_allreduce(send, recv, count, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS)
      << braid_last_error();
  const int n = size();
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(recv[i], static_cast<int32_t>(i % 1000) * n + n * (n - 1) / 2) << "element " << i;
  // One rank alone has nobody to share with, so its buffers decide nothing.
  if (n > 1) {
    EXPECT_EQ(zero_copy_calls(), before);
  }
}

// More regions than a rank keeps mapped per peer: old mappings are dropped, new ones made, and
// a region freed and replaced (perhaps at the same address or fd number) is never confused with
// its successor.
TEST(ZeroCopy, ManyRegionsOneAfterAnother) {
  const size_t count = size_t{20000};
  for (int round = 0; round < 12; ++round) {
    Shared send(count * sizeof(int64_t)), recv(count * sizeof(int64_t));
    auto *s = reinterpret_cast<int64_t *>(send.data());
    auto *r = reinterpret_cast<int64_t *>(recv.data());
    for (size_t i = 0; i < count; ++i) s[i] = round * 1000 + rank() + static_cast<int64_t>(i);
    ASSERT_EQ(braid_allreduce(s, r, count, BRAID_INT64, BRAID_MAX, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(r[i], round * 1000 + (size() - 1) + static_cast<int64_t>(i))
          << "round " << round << " element " << i;
  }
}

// Broadcast needs only the root's buffer to be shared: the others copy straight from it.
TEST(ZeroCopy, BroadcastFromEveryRootReadsTheRootsBuffer) {
  const size_t bytes = (size_t{1} << 20) + 12;
  for (int root = 0; root < size(); ++root) {
    Shared shared(bytes);
    std::vector<char> ordinary(bytes);
    char *buf = rank() == root ? shared.data() : ordinary.data();
    for (size_t i = 0; i < bytes; ++i)
      buf[i] = static_cast<char>(rank() == root ? (i * 7 + static_cast<size_t>(root)) % 251 : 0);
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(braid_broadcast(buf, bytes, BRAID_UINT8, root, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(buf[i], static_cast<char>((i * 7 + static_cast<size_t>(root)) % 251))
          << "root " << root << " byte " << i;
    EXPECT_EQ(zero_copy_calls() - before, shm_selected("BRAID_BROADCAST_ALGO") ? 1u : 0u);
  }
}

// Allgather reads every rank's send buffer in place when all of them are shared: out of place
// into a private receive buffer, and in place (each send block inside a shared recvbuf).
TEST(ZeroCopy, AllgatherReadsEveryRanksSendBuffer) {
  const size_t block = (size_t{64} << 10) + 12;
  const auto n = static_cast<size_t>(size());
  const auto me = static_cast<size_t>(rank());
  auto byte = [](size_t r, size_t i) { return static_cast<char>((i * 13 + r * 7 + 1) % 251); };
  const uint64_t expected = shm_selected("BRAID_ALLGATHER_ALGO") ? 1u : 0u;
  {
    Shared send(block);
    std::vector<char> recv(n * block, 0);
    for (size_t i = 0; i < block; ++i) send.data()[i] = byte(me, i);
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(braid_allgather(send.data(), recv.data(), block, BRAID_UINT8, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < block; ++i)
        ASSERT_EQ(recv[r * block + i], byte(r, i)) << "block " << r << " byte " << i;
    EXPECT_EQ(zero_copy_calls() - before, expected);
  }
  {
    Shared all(n * block);
    for (size_t i = 0; i < n * block; ++i) all.data()[i] = 0;
    char *mine = all.data() + me * block;
    for (size_t i = 0; i < block; ++i) mine[i] = byte(me + 100, i);
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(braid_allgather(mine, all.data(), block, BRAID_UINT8, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < block; ++i)
        ASSERT_EQ(all.data()[r * block + i], byte(r + 100, i)) << "in place, block " << r;
    EXPECT_EQ(zero_copy_calls() - before, expected);
  }
  {
    // One rank's send buffer private: everyone uses the windows.
    Shared shared(block);
    std::vector<char> ordinary(block), recv(n * block, 0);
    char *send = rank() == size() - 1 ? ordinary.data() : shared.data();
    for (size_t i = 0; i < block; ++i) send[i] = byte(me + 200, i);
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(braid_allgather(send, recv.data(), block, BRAID_UINT8, world()), BRAID_SUCCESS)
        << braid_last_error();
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < block; ++i)
        ASSERT_EQ(recv[r * block + i], byte(r + 200, i)) << "mixed, block " << r;
    EXPECT_EQ(zero_copy_calls(), before);
  }
}

// Gather: the root reads the others' shared send buffers in place (its own buffers may be
// private). Scatter: the others read their blocks from the root's shared send buffer. From
// every root; then with one sender's buffer private (gather) or the root's (scatter): windows.
TEST(ZeroCopy, GatherAndScatterReadInPlaceFromEveryRoot) {
  const size_t block = (size_t{32} << 10) + 4;
  const auto n = static_cast<size_t>(size());
  const auto me = static_cast<size_t>(rank());
  auto byte = [](size_t r, size_t i) { return static_cast<char>((i * 5 + r * 11 + 3) % 253); };
  const uint64_t gathered = shm_selected("BRAID_GATHER_ALGO") ? 1u : 0u;
  const uint64_t scattered = shm_selected("BRAID_SCATTER_ALGO") ? 1u : 0u;
  for (int root = 0; root < size(); ++root) {
    const bool is_root = rank() == root;
    for (int shared_ok = 1; shared_ok >= 0; --shared_ok) {
      // gather: every sender shared, or the last non-root sender private
      const int private_rank = root == size() - 1 ? 0 : size() - 1;
      const bool mine_private = !shared_ok && rank() == private_rank && !is_root;
      Shared send(block);
      std::vector<char> ordinary(block), recv(n * block, 0);
      char *s = mine_private ? ordinary.data() : send.data();
      for (size_t i = 0; i < block; ++i) s[i] = byte(me + static_cast<size_t>(shared_ok), i);
      uint64_t before = zero_copy_calls();
      ASSERT_EQ(braid_gather(s, is_root ? recv.data() : nullptr, block, BRAID_UINT8, root, world()),
                BRAID_SUCCESS)
          << braid_last_error();
      if (is_root) {
        for (size_t r = 0; r < n; ++r)
          for (size_t i = 0; i < block; ++i)
            ASSERT_EQ(recv[r * block + i], byte(r + static_cast<size_t>(shared_ok), i))
                << "gather root " << root << " block " << r;
      }
      EXPECT_EQ(zero_copy_calls() - before, shared_ok || n < 2 ? gathered : 0u) << "gather";
      // scatter: the root's buffer shared, or private. Blocks of 512 KiB: where ranks share
      // cores the root offers its buffer only past what the windows hold (root_mapped_min).
      const size_t piece = (size_t{512} << 10) + 4;
      Shared all(n * piece);
      std::vector<char> all_private(n * piece), mine(piece, 0);
      char *src = shared_ok ? all.data() : all_private.data();
      if (is_root)
        for (size_t i = 0; i < n * piece; ++i) src[i] = byte(i / piece + 50, i % piece);
      before = zero_copy_calls();
      ASSERT_EQ(
          braid_scatter(is_root ? src : nullptr, mine.data(), piece, BRAID_UINT8, root, world()),
          BRAID_SUCCESS)
          << braid_last_error();
      for (size_t i = 0; i < piece; ++i)
        ASSERT_EQ(mine[i], byte(me + 50, i)) << "scatter root " << root << " byte " << i;
      EXPECT_EQ(zero_copy_calls() - before, shared_ok ? scattered : 0u) << "scatter";
    }
  }
}

// Reduce: every rank reduces its share of the shared send buffers straight into the root's
// shared receive buffer (in place at the root too), the windows' bits, from every root.
TEST(ZeroCopy, ReduceWritesItsShareIntoTheRootsBuffer) {
  const size_t count = (size_t{16} << 10) + 5;  // floats: 64 KiB
  const bool shm = shm_selected("BRAID_REDUCE_ALGO");
  std::vector<float> want = random_floats(count, 900u);
  for (int r = 1; r < size(); ++r) {
    const std::vector<float> x = random_floats(count, 900u + static_cast<unsigned>(r));
    for (size_t i = 0; i < count; ++i) want[i] = want[i] + x[i];
  }
  const std::vector<float> mine = random_floats(count, 900u + static_cast<unsigned>(rank()));
  for (int root = 0; root < size(); ++root)
    for (bool in_place : {false, true}) {
      Shared send(count * sizeof(float)), recv(count * sizeof(float));
      std::memcpy(send.data(), mine.data(), count * sizeof(float));
      const bool is_root = rank() == root;
      char *out = !is_root ? nullptr : in_place ? send.data() : recv.data();
      const uint64_t before = zero_copy_calls();
      ASSERT_EQ(braid_reduce(send.data(), out, count, BRAID_FLOAT32, BRAID_SUM, root, world()),
                BRAID_SUCCESS)
          << braid_last_error();
      if (is_root && shm) {
        EXPECT_EQ(std::memcmp(out, want.data(), count * sizeof(float)), 0)
            << "root " << root << " in place " << in_place;
      } else if (is_root) {
        for (size_t i = 0; i < count; ++i)
          ASSERT_NEAR(reinterpret_cast<const float *>(out)[i], want[i], 1e-5 * size()) << i;
      }
      EXPECT_EQ(zero_copy_calls() - before, shm ? 1u : 0u)
          << "root " << root << " in place " << in_place;
    }
}

// Reduce-scatter: each rank reduces its block of every rank's shared send buffer in place, in
// rank order (the windows' bits). Alltoallv: each rank reads its block, of its own size and
// place, from every rank's shared send buffer.
TEST(ZeroCopy, ReduceScatterAndAlltoallvReadEveryRanksSendBuffer) {
  const auto n = static_cast<size_t>(size());
  const auto me = static_cast<size_t>(rank());
  const bool rs_shm = shm_selected("BRAID_REDUCE_SCATTER_ALGO");
  const bool a2a_shm = shm_selected("BRAID_ALLTOALLV_ALGO");
  {
    const size_t block = (size_t{8} << 10) + 3;  // floats: 32 KiB, the mapped path's floor
    Shared send(n * block * sizeof(float));
    const std::vector<float> mine = random_floats(n * block, 77u + static_cast<unsigned>(me));
    std::memcpy(send.data(), mine.data(), n * block * sizeof(float));
    std::vector<float> want(block), recv(block, 0.0f);
    for (size_t r = 0; r < n; ++r) {
      const std::vector<float> x = random_floats(n * block, 77u + static_cast<unsigned>(r));
      for (size_t i = 0; i < block; ++i)
        want[i] = r == 0 ? x[me * block + i] : want[i] + x[me * block + i];
    }
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(
        braid_reduce_scatter(send.data(), recv.data(), block, BRAID_FLOAT32, BRAID_SUM, world()),
        BRAID_SUCCESS)
        << braid_last_error();
    if (rs_shm) {
      EXPECT_EQ(std::memcmp(recv.data(), want.data(), block * sizeof(float)), 0);
    } else {
      for (size_t i = 0; i < block; ++i) ASSERT_NEAR(recv[i], want[i], 1e-5 * size()) << i;
    }
    EXPECT_EQ(zero_copy_calls() - before, rs_shm ? 1u : 0u) << "reduce_scatter";
  }
  {
    // Rank r sends rank d 20000 + 1000 * d + 7 * r bytes, the block for the last rank first.
    auto bytes_of = [](size_t r, size_t d) { return 20000 + 1000 * d + 7 * r; };
    auto byte = [](size_t r, size_t d, size_t i) {
      return static_cast<char>((i * 3 + r * 17 + d * 5 + 1) % 251);
    };
    std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
    size_t stotal = 0, rtotal = 0;
    for (size_t d = n; d-- > 0;) {
      sc[d] = bytes_of(me, d);
      sd[d] = stotal;
      stotal += sc[d];
      rc[d] = bytes_of(d, me);
      rd[d] = rtotal;
      rtotal += rc[d];
    }
    Shared send(stotal);
    for (size_t d = 0; d < n; ++d)
      for (size_t i = 0; i < sc[d]; ++i) send.data()[sd[d] + i] = byte(me, d, i);
    std::vector<char> recv(rtotal, 0);
    const uint64_t before = zero_copy_calls();
    ASSERT_EQ(braid_alltoallv(send.data(), sc.data(), sd.data(), recv.data(), rc.data(), rd.data(),
                              BRAID_UINT8, world()),
              BRAID_SUCCESS)
        << braid_last_error();
    for (size_t s = 0; s < n; ++s)
      for (size_t i = 0; i < rc[s]; ++i)
        ASSERT_EQ(recv[rd[s] + i], byte(s, me, i)) << "from " << s << " byte " << i;
    EXPECT_EQ(zero_copy_calls() - before, a2a_shm ? 1u : 0u) << "alltoallv";
  }
}

}  // namespace
}  // namespace mp
