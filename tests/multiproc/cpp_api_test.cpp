// The C++ API over the same world: typed ranges, braid::Error with code and message, RAII
// requests that wait in their destructor.
#include <braid/braid.hpp>

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "rank_env.hpp"

namespace mp {
namespace {

braid::Comm comm() {
  return braid::Comm(world());
}

TEST(CppApi, AllreduceOverVectorsArraysAndSpans) {
  std::vector<double> in(1000, rank() + 1.0), out(1000);
  comm().allreduce(in, out, braid::Op::sum);
  EXPECT_EQ(out[999], size() * (size() + 1) / 2.0);

  std::array<int64_t, 3> a{rank(), -rank(), 7};
  comm().allreduce(a, braid::Op::max);
  EXPECT_EQ(a[0], size() - 1);
  EXPECT_EQ(a[1], 0);
  EXPECT_EQ(a[2], 7);

  std::vector<uint32_t> big(5000, 2);
  comm().allreduce(std::span<uint32_t>(big).subspan(10, 100), braid::Op::prod);
  EXPECT_EQ(big[9], 2u);
  EXPECT_EQ(big[10], 1u << size());
  EXPECT_EQ(big[110], 2u);
}

TEST(CppApi, SixteenBitFloatElements) {
  std::vector<braid::bfloat16> v(64, braid::bfloat16{0x3f80});  // 1.0
  comm().allreduce(v);
  float expected = static_cast<float>(size());
  uint32_t bits;
  std::memcpy(&bits, &expected, 4);
  EXPECT_EQ(v[63].bits, bits >> 16);
}

TEST(CppApi, ErrorsCarryCodeAndMessage) {
  std::vector<float> in(10), out(9);
  try {
    comm().allreduce(in, out);
    FAIL() << "size mismatch not detected";
  } catch (const braid::Error &e) {
    EXPECT_EQ(e.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("10 elements but output has 9"), std::string::npos);
  }
  std::vector<int32_t> b(4);
  try {
    comm().broadcast(b, size() + 3);
    FAIL() << "bad root not detected";
  } catch (const braid::Error &e) {
    EXPECT_EQ(e.code(), BRAID_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("root " + std::to_string(size() + 3)), std::string::npos);
  }
}

TEST(CppApi, RequestsOverlapAndWaitInTheirDestructor) {
  std::vector<float> a(100000, 1.0f), b(50, 3.0f);
  std::vector<int> root_data(10, rank() == 0 ? 5 : 0);
  {
    braid::Request ra = comm().iallreduce(a);
    braid::Request rb = comm().iallreduce(b, braid::Op::min);
    braid::Request rc = comm().ibroadcast(root_data, 0);
    rb.wait();
    EXPECT_FALSE(rb.pending());
    while (!rc.test()) {
    }
    // ra is completed by its destructor.
  }
  EXPECT_EQ(a[99999], static_cast<float>(size()));
  EXPECT_EQ(b[0], 3.0f);
  EXPECT_EQ(root_data[9], 5);
}

TEST(CppApi, SplitAndDupOwnTheirCommunicators) {
  std::optional<braid::Comm> half = comm().split(rank() % 2, rank());
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(half->rank(), rank() / 2);
  std::vector<int32_t> v(10, 1);
  half->allreduce(v, braid::Op::sum);
  EXPECT_EQ(v[0], (size() - rank() % 2 + 1) / 2);
  braid::Comm copy = *half;  // shares the communicator
  braid::Comm dup = copy.dup();
  EXPECT_EQ(dup.size(), half->size());
  half.reset();  // the copy keeps it alive
  copy.barrier();
  dup.free();
  EXPECT_EQ(dup.size(), -1);
  // BRAID_UNDEFINED: no communicator.
  EXPECT_FALSE(comm().split(BRAID_UNDEFINED).has_value());
  try {
    (void)comm().split(-5, 0);
    ADD_FAILURE() << "negative color accepted";
  } catch (const braid::Error &e) {
    EXPECT_EQ(e.code(), BRAID_ERR_INVALID_ARGUMENT);
  }
}

TEST(CppApi, TypedFormsOfTheWholeSet) {
  const int n = size();
  const auto un = static_cast<size_t>(n);
  braid::Comm c = comm();
  // reduce to the last rank, out of place and in place.
  std::vector<int64_t> in(5, rank() + 1), out(5, -1);
  c.reduce(in, out, braid::Op::sum, n - 1);
  if (rank() == n - 1) {
    EXPECT_EQ(out[4], n * (n + 1) / 2);
  }
  c.reduce(in, braid::Op::max, 0);
  if (rank() == 0) {
    EXPECT_EQ(in[0], n);
  }
  // allgather, allgatherv
  std::vector<float> mine(2, static_cast<float>(rank())), all(2 * un);
  c.allgather(mine, all);
  for (size_t j = 0; j < all.size(); ++j) EXPECT_EQ(all[j], static_cast<float>(j / 2));
  std::vector<size_t> counts(un), displs(un);
  for (size_t r = 0; r < un; ++r) counts[r] = r % 2, displs[r] = r;
  std::vector<double> some(static_cast<size_t>(rank() % 2), 1.5 * rank()), got(un, -1.0);
  c.allgatherv(some, got, counts, displs);
  for (size_t r = 0; r < un; ++r) EXPECT_EQ(got[r], r % 2 ? 1.5 * static_cast<double>(r) : -1.0);
  // reduce_scatter
  std::vector<int32_t> blocks(3 * un, 2), share(3);
  c.reduce_scatter(blocks, share, braid::Op::sum);
  for (int32_t x : share) EXPECT_EQ(x, 2 * n);
  // alltoall out of place and in place
  std::vector<uint32_t> a2a(un), back(un);
  for (size_t j = 0; j < un; ++j)
    a2a[j] = static_cast<uint32_t>(rank() * 100) + static_cast<uint32_t>(j);
  c.alltoall(a2a, back);
  for (size_t j = 0; j < un; ++j) EXPECT_EQ(back[j], j * 100 + static_cast<size_t>(rank()));
  c.alltoall(a2a);
  EXPECT_EQ(a2a, back);
  // gather and scatter from rank 0
  std::vector<int8_t> g(un, -1), one(1, static_cast<int8_t>(rank()));
  c.gather(one, g, 0);
  if (rank() == 0) {
    for (size_t j = 0; j < un; ++j) EXPECT_EQ(g[j], static_cast<int8_t>(j));
  }
  std::vector<int8_t> piece(1, -1);
  c.scatter(g, piece, 0);
  EXPECT_EQ(piece[0], static_cast<int8_t>(rank()));
  // non-blocking
  std::vector<float> all2(2 * un);
  braid::Request r1 = c.iallgather(mine, all2);
  braid::Request r2 = c.ibarrier();
  r2.wait();
  r1.wait();
  EXPECT_EQ(all2, all);
  // The rest of the non-blocking set, all in flight at once, on 16-bit integers.
  std::vector<int16_t> rin(3, static_cast<int16_t>(-rank() - 1)), rout(3, 0);
  std::vector<uint16_t> vin(static_cast<size_t>(rank() % 2), static_cast<uint16_t>(rank())),
      vout(un, 9);
  std::vector<int16_t> tin(un), tout(un, -1), gin(1, static_cast<int16_t>(rank())), gout(un, -1);
  std::vector<int16_t> sin(un), sout(1, -1);
  std::vector<size_t> ones(un, 1), steps(un);
  for (size_t j = 0; j < un; ++j) {
    tin[j] = static_cast<int16_t>(rank() * 10 + static_cast<int>(j));
    sin[j] = static_cast<int16_t>(j * 3);
    steps[j] = j;
  }
  {
    braid::Request q1 = c.ireduce(rin, rout, braid::Op::min, n - 1);
    braid::Request q2 = c.iallgatherv(vin, vout, counts, displs);
    braid::Request q3 = c.ialltoallv(tin, ones, steps, tout, ones, steps);
    braid::Request q4 = c.igather(gin, gout, 0);
    braid::Request q5 = c.iscatter(sin, sout, 0);
  }  // each waits in its destructor
  if (rank() == n - 1) {
    EXPECT_EQ(rout[2], static_cast<int16_t>(-n));
  }
  for (size_t r = 0; r < un; ++r) EXPECT_EQ(vout[r], r % 2 ? r : 9u);
  for (size_t j = 0; j < un; ++j)
    EXPECT_EQ(tout[j], static_cast<int16_t>(j * 10 + static_cast<size_t>(rank())));
  if (rank() == 0) {
    for (size_t j = 0; j < un; ++j) EXPECT_EQ(gout[j], static_cast<int16_t>(j));
  }
  EXPECT_EQ(sout[0], static_cast<int16_t>(rank() * 3));
  // The in-place non-blocking forms, as their blocking twins.
  std::vector<int32_t> rio(4, rank() + 1), aio(un);
  for (size_t j = 0; j < un; ++j) aio[j] = rank() * 100 + static_cast<int>(j);
  {
    braid::Request q1 = c.ireduce(rio, braid::Op::sum, 0);
    braid::Request q2 = c.ialltoall(aio);
  }
  if (rank() == 0) {
    EXPECT_EQ(rio, std::vector<int32_t>(4, n * (n + 1) / 2));
  }
  for (size_t j = 0; j < un; ++j)
    EXPECT_EQ(aio[j], static_cast<int32_t>(j) * 100 + rank()) << "from " << j;
  // Sizes that cannot be right are refused before anything is sent.
  std::vector<float> wrong(2 * un + 1);
  try {
    c.allgather(mine, wrong);
    ADD_FAILURE() << "allgather accepted an output of the wrong size";
  } catch (const braid::Error &e) {
    EXPECT_EQ(e.code(), BRAID_ERR_INVALID_ARGUMENT);
  }
}

}  // namespace
}  // namespace mp
