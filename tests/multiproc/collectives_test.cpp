// reduce, allgather(v), reduce_scatter, alltoall(v), gather and scatter on every rank of the
// job: every dtype (and op where one applies), in place and not, every root, sizes on both
// sides of the selection table's switch points, v-variants with zero counts and uneven, gapped
// displacements. Expected values are computed here from what each rank was given.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

using Bytes = std::vector<unsigned char>;

// Byte b of element i of rank r's block j: a pattern every rank can compute for every other.
unsigned char pattern(int r, int j, size_t byte) {
  const uint64_t h = (static_cast<uint64_t>(r) * 1000003u + static_cast<uint64_t>(j) * 7919u +
                      byte * 2654435761u) ^
                     0x5bd1e995u;
  return static_cast<unsigned char>(h ^ (h >> 13) ^ (h >> 29));
}

void fill(Bytes &buf, size_t off, size_t bytes, int r, int j) {
  for (size_t b = 0; b < bytes; ++b) buf[off + b] = pattern(r, j, b);
}

// First differing byte of [off, off + bytes) against rank r's block j, or -1.
long mismatch_at(const unsigned char *buf, size_t bytes, int r, int j) {
  for (size_t b = 0; b < bytes; ++b)
    if (buf[b] != pattern(r, j, b)) return static_cast<long>(b);
  return -1;
}

// The reduction over every rank of input element i (input_value is exact in every dtype).
// For AVG (integer dtypes here) the sum divided by the rank count, truncated toward zero.
int64_t reduced(braid_dtype_t dt, braid_op_t op, size_t i) {
  int64_t acc = alone(op, input_value(dt, op, 0, i));
  for (int r = 1; r < size(); ++r) acc = combine(op, acc, input_value(dt, op, r, i));
  return op == BRAID_AVG ? acc / size() : acc;
}

std::string what(const char *coll, braid_dtype_t dt, size_t count, bool in_place, int root = -1) {
  return std::string(coll) + " " + dtype_str(dt) + " count " + std::to_string(count) +
         (in_place ? " in place" : "") + (root >= 0 ? " root " + std::to_string(root) : "");
}

constexpr braid_dtype_t kMoveDtypes[] = {BRAID_INT8, BRAID_FLOAT16, BRAID_UINT32, BRAID_FLOAT64};

// --- reduce ---------------------------------------------------------------------------------

void check_reduce(braid_dtype_t dt, braid_op_t op, size_t count, int root, bool in_place) {
  const size_t es = elem_size(dt);
  Bytes in(count * es), out(count * es, 0xcd);
  for (size_t i = 0; i < count; ++i) store(dt, in.data(), i, input_value(dt, op, rank(), i));
  const bool is_root = rank() == root;
  void *recv = in_place && is_root ? in.data() : out.data();
  ASSERT_EQ(braid_reduce(in.data(), recv, count, dt, op, root, world()), BRAID_SUCCESS)
      << what("reduce", dt, count, in_place, root) << ": " << braid_last_error();
  if (!is_root) {
    // Off the root the output is not touched.
    for (unsigned char c : out) ASSERT_EQ(c, 0xcd) << what("reduce", dt, count, in_place, root);
    return;
  }
  Bytes expected(count * es);
  for (size_t i = 0; i < count; ++i) store(dt, expected.data(), i, reduced(dt, op, i));
  ASSERT_EQ(std::memcmp(recv, expected.data(), expected.size()), 0)
      << what("reduce", dt, count, in_place, root) << " op " << op_str(op);
}

TEST(Collectives, ReduceEveryDtypeOpAndRoot) {
  for (braid_dtype_t dt : kAllDtypes)
    for (braid_op_t op : kAllOps)
      for (int root = 0; root < size(); ++root)
        for (size_t count : {size_t{1}, size_t{5}, size_t{4099}})
          for (bool in_place : {false, true}) check_reduce(dt, op, count, root, in_place);
}

TEST(Collectives, ReduceLarge) {
  // Past the 256 KiB switch to the scatter-gather algorithm; more elements than ranks and not
  // a multiple of them.
  for (int root : {0, size() - 1})
    for (bool in_place : {false, true})
      check_reduce(BRAID_FLOAT32, BRAID_SUM, (size_t{300} << 10) / 4 + 3, root, in_place);
  check_reduce(BRAID_INT64, BRAID_MAX, (size_t{600} << 10) / 8 + 1, size() / 2, false);
}

TEST(Collectives, ReduceIgnoresRecvbufOffTheRoot) {
  int32_t v = rank() + 1;
  int32_t out = -1;
  ASSERT_EQ(braid_reduce(&v, rank() == 0 ? &out : nullptr, 1, BRAID_INT32, BRAID_SUM, 0, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  if (rank() == 0) {
    EXPECT_EQ(out, size() * (size() + 1) / 2);
  }
}

// --- allgather(v) ---------------------------------------------------------------------------

void check_allgather(braid_dtype_t dt, size_t count, bool in_place) {
  const size_t block = count * elem_size(dt);
  const auto n = static_cast<size_t>(size());
  Bytes out(block * n, 0xcd), mine(block);
  fill(mine, 0, block, rank(), 0);
  const void *send = mine.data();
  if (in_place) {
    fill(out, static_cast<size_t>(rank()) * block, block, rank(), 0);
    send = out.data() + static_cast<size_t>(rank()) * block;
  }
  ASSERT_EQ(braid_allgather(send, out.data(), count, dt, world()), BRAID_SUCCESS)
      << what("allgather", dt, count, in_place) << ": " << braid_last_error();
  for (int r = 0; r < size(); ++r)
    ASSERT_EQ(mismatch_at(out.data() + static_cast<size_t>(r) * block, block, r, 0), -1)
        << what("allgather", dt, count, in_place) << ": block of rank " << r;
}

TEST(Collectives, AllgatherEveryDtype) {
  for (braid_dtype_t dt : kAllDtypes)
    for (size_t count : {size_t{1}, size_t{3}, size_t{1000}, size_t{3000}})
      for (bool in_place : {false, true}) check_allgather(dt, count, in_place);
}

// Rank r gives (r * 3 + 2) % 5 elements (some give none); blocks are placed in reverse rank
// order with a gap of 3 elements between them.
void check_allgatherv(braid_dtype_t dt, size_t scale, bool in_place) {
  const size_t es = elem_size(dt);
  const int n = size();
  std::vector<size_t> counts(static_cast<size_t>(n)), displs(static_cast<size_t>(n));
  size_t at = 0;
  for (int r = n - 1; r >= 0; --r) {
    counts[static_cast<size_t>(r)] = static_cast<size_t>((r * 3 + 2) % 5) * scale;
    displs[static_cast<size_t>(r)] = at;
    at += counts[static_cast<size_t>(r)] + 3;
  }
  Bytes out(at * es, 0xcd);
  const size_t mine = counts[static_cast<size_t>(rank())];
  Bytes send(mine * es);
  fill(send, 0, send.size(), rank(), 0);
  const void *src = send.data();
  if (in_place) {
    fill(out, displs[static_cast<size_t>(rank())] * es, mine * es, rank(), 0);
    src = out.data() + displs[static_cast<size_t>(rank())] * es;
  }
  ASSERT_EQ(braid_allgatherv(src, mine, out.data(), counts.data(), displs.data(), dt, world()),
            BRAID_SUCCESS)
      << what("allgatherv", dt, scale, in_place) << ": " << braid_last_error();
  for (int r = 0; r < n; ++r) {
    const auto u = static_cast<size_t>(r);
    ASSERT_EQ(mismatch_at(out.data() + displs[u] * es, counts[u] * es, r, 0), -1)
        << what("allgatherv", dt, scale, in_place) << ": block of rank " << r;
    // The gaps are untouched.
    for (size_t g = 0; g < 3 * es; ++g)
      ASSERT_EQ(out[(displs[u] + counts[u]) * es + g], 0xcd) << "gap after rank " << r;
  }
}

TEST(Collectives, AllgathervUnevenWithZeroCounts) {
  for (braid_dtype_t dt : kMoveDtypes)
    for (size_t scale : {size_t{1}, size_t{777}})
      for (bool in_place : {false, true}) check_allgatherv(dt, scale, in_place);
}

TEST(Collectives, AllgathervRefusesACountThatIsNotItsOwn) {
  std::vector<size_t> counts(static_cast<size_t>(size()), 2), displs(static_cast<size_t>(size()));
  for (int r = 0; r < size(); ++r) displs[static_cast<size_t>(r)] = 2 * static_cast<size_t>(r);
  std::vector<int32_t> out(2 * static_cast<size_t>(size())), in(3);
  // Refused on the calling rank before anything is sent: every rank makes the same mistake.
  EXPECT_EQ(braid_allgatherv(in.data(), 3, out.data(), counts.data(), displs.data(), BRAID_INT32,
                             world()),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("recvcounts[" + std::to_string(rank()) + "]"),
            std::string::npos)
      << braid_last_error();
}

// --- reduce_scatter -------------------------------------------------------------------------

void check_reduce_scatter(braid_dtype_t dt, braid_op_t op, size_t count, bool in_place) {
  const size_t es = elem_size(dt);
  const auto n = static_cast<size_t>(size());
  Bytes in(count * n * es), out(count * es, 0xcd);
  for (size_t i = 0; i < count * n; ++i) store(dt, in.data(), i, input_value(dt, op, rank(), i));
  void *recv = in_place ? in.data() + static_cast<size_t>(rank()) * count * es : out.data();
  ASSERT_EQ(braid_reduce_scatter(in.data(), recv, count, dt, op, world()), BRAID_SUCCESS)
      << what("reduce_scatter", dt, count, in_place) << ": " << braid_last_error();
  Bytes expected(count * es);
  const size_t first = static_cast<size_t>(rank()) * count;
  for (size_t i = 0; i < count; ++i) store(dt, expected.data(), i, reduced(dt, op, first + i));
  ASSERT_EQ(std::memcmp(recv, expected.data(), expected.size()), 0)
      << what("reduce_scatter", dt, count, in_place) << " op " << op_str(op);
}

TEST(Collectives, ReduceScatterEveryDtypeAndOp) {
  for (braid_dtype_t dt : kAllDtypes)
    for (braid_op_t op : kAllOps)
      for (size_t count : {size_t{1}, size_t{3}, size_t{1000}})
        for (bool in_place : {false, true}) check_reduce_scatter(dt, op, count, in_place);
  // Past the 64 KiB switch to the ring.
  check_reduce_scatter(BRAID_FLOAT32, BRAID_SUM, (size_t{80} << 10) / 4 + 1, false);
  check_reduce_scatter(BRAID_INT32, BRAID_MIN, (size_t{80} << 10) / 4, true);
}

TEST(Collectives, ReduceAndReduceScatterWithIntegerOpsAndAverage) {
  for (braid_dtype_t dt : kAllDtypes) {
    if (!is_integer(dt)) continue;
    for (braid_op_t op : kIntegerOps) {
      check_reduce(dt, op, 1000, size() - 1, false);
      check_reduce_scatter(dt, op, 100, true);
    }
    // Integer averages: sum / n truncated toward zero, where the result is held.
    check_reduce(dt, BRAID_AVG, 77, 0, false);
    check_reduce_scatter(dt, BRAID_AVG, 9, false);
  }
}

// --- alltoall(v) ----------------------------------------------------------------------------

void check_alltoall(braid_dtype_t dt, size_t count, bool in_place) {
  const size_t block = count * elem_size(dt);
  const auto n = static_cast<size_t>(size());
  Bytes send(block * n), out(block * n, 0xcd);
  // Block j of rank r is pattern (r, j): what rank j must find at block r.
  for (size_t j = 0; j < n; ++j) fill(send, j * block, block, rank(), static_cast<int>(j));
  void *recv = in_place ? send.data() : out.data();
  ASSERT_EQ(braid_alltoall(send.data(), recv, count, dt, world()), BRAID_SUCCESS)
      << what("alltoall", dt, count, in_place) << ": " << braid_last_error();
  for (int r = 0; r < size(); ++r)
    ASSERT_EQ(mismatch_at(static_cast<unsigned char *>(recv) + static_cast<size_t>(r) * block,
                          block, r, rank()),
              -1)
        << what("alltoall", dt, count, in_place) << ": block from rank " << r;
}

TEST(Collectives, AlltoallEveryDtype) {
  for (braid_dtype_t dt : kAllDtypes)
    for (size_t count : {size_t{1}, size_t{7}, size_t{3000}})
      for (bool in_place : {false, true}) check_alltoall(dt, count, in_place);
}

// Rank i sends (i + 2j) % 4 * scale elements to rank j (some none), blocks in reverse order
// with gaps, received likewise.
void check_alltoallv(braid_dtype_t dt, size_t scale) {
  const size_t es = elem_size(dt);
  const int n = size();
  auto count = [&](int from, int to) { return static_cast<size_t>((from + 2 * to) % 4) * scale; };
  std::vector<size_t> sc(static_cast<size_t>(n)), sd(sc), rc(sc), rd(sc);
  size_t s_at = 0, r_at = 0;
  for (int j = n - 1; j >= 0; --j) {
    const auto u = static_cast<size_t>(j);
    sc[u] = count(rank(), j);
    sd[u] = s_at;
    s_at += sc[u] + 1;
    rc[u] = count(j, rank());
    rd[u] = r_at;
    r_at += rc[u] + 2;
  }
  Bytes send(s_at * es), out(r_at * es, 0xcd);
  for (int j = 0; j < n; ++j)
    fill(send, sd[static_cast<size_t>(j)] * es, sc[static_cast<size_t>(j)] * es, rank(), j);
  ASSERT_EQ(braid_alltoallv(send.data(), sc.data(), sd.data(), out.data(), rc.data(), rd.data(), dt,
                            world()),
            BRAID_SUCCESS)
      << "alltoallv " << dtype_str(dt) << " scale " << scale << ": " << braid_last_error();
  for (int j = 0; j < n; ++j) {
    const auto u = static_cast<size_t>(j);
    ASSERT_EQ(mismatch_at(out.data() + rd[u] * es, rc[u] * es, j, rank()), -1)
        << "alltoallv " << dtype_str(dt) << " scale " << scale << ": block from rank " << j;
    for (size_t g = 0; g < 2 * es; ++g)
      ASSERT_EQ(out[(rd[u] + rc[u]) * es + g], 0xcd) << "gap after rank " << j;
  }
}

TEST(Collectives, AlltoallvUnevenWithZeroCounts) {
  for (braid_dtype_t dt : kMoveDtypes)
    for (size_t scale : {size_t{1}, size_t{501}}) check_alltoallv(dt, scale);
}

// --- gather and scatter ---------------------------------------------------------------------

void check_gather(braid_dtype_t dt, size_t count, int root, bool in_place) {
  const size_t block = count * elem_size(dt);
  const auto n = static_cast<size_t>(size());
  const bool is_root = rank() == root;
  Bytes mine(block), out(block * n, 0xcd);
  fill(mine, 0, block, rank(), 0);
  const void *send = mine.data();
  if (in_place && is_root) {
    fill(out, static_cast<size_t>(rank()) * block, block, rank(), 0);
    send = out.data() + static_cast<size_t>(rank()) * block;
  }
  ASSERT_EQ(braid_gather(send, is_root ? out.data() : nullptr, count, dt, root, world()),
            BRAID_SUCCESS)
      << what("gather", dt, count, in_place, root) << ": " << braid_last_error();
  if (!is_root) return;
  for (int r = 0; r < size(); ++r)
    ASSERT_EQ(mismatch_at(out.data() + static_cast<size_t>(r) * block, block, r, 0), -1)
        << what("gather", dt, count, in_place, root) << ": block of rank " << r;
}

void check_scatter(braid_dtype_t dt, size_t count, int root) {
  const size_t block = count * elem_size(dt);
  const auto n = static_cast<size_t>(size());
  const bool is_root = rank() == root;
  Bytes send(is_root ? block * n : 0), out(block, 0xcd);
  for (size_t j = 0; is_root && j < n; ++j) fill(send, j * block, block, root, static_cast<int>(j));
  ASSERT_EQ(braid_scatter(is_root ? send.data() : nullptr, out.data(), count, dt, root, world()),
            BRAID_SUCCESS)
      << what("scatter", dt, count, false, root) << ": " << braid_last_error();
  ASSERT_EQ(mismatch_at(out.data(), block, root, rank()), -1)
      << what("scatter", dt, count, false, root);
}

TEST(Collectives, GatherAndScatterEveryRoot) {
  for (braid_dtype_t dt : kMoveDtypes)
    for (int root = 0; root < size(); ++root)
      // 20000 int8s and more: past the 64 KiB switch to the linear algorithms for the wider ones.
      for (size_t count : {size_t{1}, size_t{5}, size_t{20000}}) {
        for (bool in_place : {false, true}) check_gather(dt, count, root, in_place);
        check_scatter(dt, count, root);
      }
}

// The movements above run one dtype per element size; every dtype once more, small, so that no
// dtype is refused or mis-sized by a movement collective.
TEST(Collectives, MovementsTakeEveryDtype) {
  for (braid_dtype_t dt : kAllDtypes) {
    check_allgatherv(dt, 1, false);
    check_alltoallv(dt, 1);
    check_gather(dt, 5, size() - 1, false);
    check_scatter(dt, 5, size() - 1);
  }
}

// --- blocks larger than the node path's windows ---------------------------------------------

// The node-local path cuts blocks into windows (256 KiB per rank, or 1/n of it per pair of
// ranks): blocks of 300 KiB and a few elements more take several windows and a partial last one.
TEST(Collectives, BlocksSpanningSeveralNodeWindows) {
  const size_t count = (size_t{300} << 10) / 4 + 3;
  for (bool in_place : {false, true}) {
    check_allgather(BRAID_FLOAT32, count, in_place);
    check_alltoall(BRAID_INT32, count / 2, in_place);
    check_reduce_scatter(BRAID_FLOAT32, BRAID_SUM, count, in_place);
    check_gather(BRAID_UINT32, count, size() - 1, in_place);
    check_allgatherv(BRAID_FLOAT32, count / 3, in_place);
    check_reduce(BRAID_FLOAT64, BRAID_MAX, count, 0, in_place);
  }
  check_scatter(BRAID_INT32, count, size() / 2);
  check_alltoallv(BRAID_UINT8, count);
}

// --- non-blocking, errors -------------------------------------------------------------------

TEST(Collectives, NonBlockingFormsInFlightTogether) {
  const int n = size();
  const auto un = static_cast<size_t>(n);
  std::vector<int32_t> red(100, rank() + 1), red_out(100, -1);
  std::vector<int32_t> ag_in(10, rank()), ag_out(10 * un, -1);
  std::vector<int32_t> rs_in(4 * un, 1), rs_out(4, -1);
  std::vector<int32_t> a2a_in(3 * un), a2a_out(3 * un, -1);
  for (size_t j = 0; j < 3 * un; ++j) a2a_in[j] = rank() * 1000 + static_cast<int>(j / 3);
  std::vector<int32_t> g_out(2 * un, -1), sc_in(2 * un), sc_out(2, -1);
  for (size_t j = 0; j < 2 * un; ++j) sc_in[j] = static_cast<int>(j / 2) * 10;
  std::vector<int32_t> g_in(2, rank());
  braid_request_t req[7] = {};
  ASSERT_EQ(braid_ireduce(red.data(), red_out.data(), red.size(), BRAID_INT32, BRAID_SUM, n - 1,
                          world(), &req[0]),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_iallgather(ag_in.data(), ag_out.data(), 10, BRAID_INT32, world(), &req[1]),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_ireduce_scatter(rs_in.data(), rs_out.data(), 4, BRAID_INT32, BRAID_SUM, world(),
                                  &req[2]),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_ialltoall(a2a_in.data(), a2a_out.data(), 3, BRAID_INT32, world(), &req[3]),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_igather(g_in.data(), g_out.data(), 2, BRAID_INT32, 0, world(), &req[4]),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_iscatter(sc_in.data(), sc_out.data(), 2, BRAID_INT32, 0, world(), &req[5]),
            BRAID_SUCCESS);
  ASSERT_EQ(braid_ibarrier(world(), &req[6]), BRAID_SUCCESS);
  for (int k = 6; k >= 0; --k) ASSERT_EQ(braid_wait(&req[k]), BRAID_SUCCESS) << braid_last_error();
  if (rank() == n - 1) {
    for (int32_t x : red_out) ASSERT_EQ(x, n * (n + 1) / 2);
  }
  for (size_t j = 0; j < ag_out.size(); ++j) ASSERT_EQ(ag_out[j], static_cast<int>(j / 10));
  for (int32_t x : rs_out) ASSERT_EQ(x, n);
  for (size_t j = 0; j < a2a_out.size(); ++j)
    ASSERT_EQ(a2a_out[j], static_cast<int>(j / 3) * 1000 + rank());
  if (rank() == 0) {
    for (size_t j = 0; j < g_out.size(); ++j) ASSERT_EQ(g_out[j], static_cast<int>(j / 2));
  }
  for (int32_t x : sc_out) ASSERT_EQ(x, rank() * 10);
}

TEST(Collectives, BadArgumentsAreRefusedOnTheCallingRank) {
  int32_t a[4] = {}, b[64] = {};
  EXPECT_EQ(braid_reduce(a, b, 1, BRAID_INT32, BRAID_SUM, size(), world()),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("reduce: root"), std::string::npos);
  EXPECT_EQ(braid_gather(a, b, 1, BRAID_INT32, -1, world()), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_scatter(a, nullptr, 1, BRAID_INT32, 0, world()), BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("recvbuf is NULL"), std::string::npos);
  EXPECT_EQ(braid_allgather(a, b, 1, static_cast<braid_dtype_t>(999), world()),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(braid_last_error()).find("unknown dtype 999"), std::string::npos);
  EXPECT_EQ(braid_reduce_scatter(b, b + 1, 1, BRAID_INT32, static_cast<braid_op_t>(77), world()),
            BRAID_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(braid_alltoallv(a, nullptr, nullptr, b, nullptr, nullptr, BRAID_INT32, world()),
            BRAID_ERR_INVALID_ARGUMENT);
  if (size() > 1) {
    // Overlapping without being the in-place form.
    EXPECT_EQ(braid_alltoall(b, b + 1, 1, BRAID_INT32, world()), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(braid_last_error()).find("overlap"), std::string::npos);
  }
  // Nothing was sent: the world still works.
  int32_t x = 1;
  ASSERT_EQ(braid_allreduce(&x, &x, 1, BRAID_INT32, BRAID_SUM, world()), BRAID_SUCCESS);
  EXPECT_EQ(x, size());
}

TEST(Collectives, ZeroCountsAreNoOps) {
  EXPECT_EQ(braid_reduce(nullptr, nullptr, 0, BRAID_INT32, BRAID_SUM, 0, world()), BRAID_SUCCESS);
  EXPECT_EQ(braid_allgather(nullptr, nullptr, 0, BRAID_INT32, world()), BRAID_SUCCESS);
  EXPECT_EQ(braid_reduce_scatter(nullptr, nullptr, 0, BRAID_INT32, BRAID_SUM, world()),
            BRAID_SUCCESS);
  EXPECT_EQ(braid_alltoall(nullptr, nullptr, 0, BRAID_INT32, world()), BRAID_SUCCESS);
  EXPECT_EQ(braid_gather(nullptr, nullptr, 0, BRAID_INT32, 0, world()), BRAID_SUCCESS);
  EXPECT_EQ(braid_scatter(nullptr, nullptr, 0, BRAID_INT32, 0, world()), BRAID_SUCCESS);
}

}  // namespace
}  // namespace mp
