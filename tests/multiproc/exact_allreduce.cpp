#include "exact_allreduce.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "rank_env.hpp"

namespace mp {

Share my_share(size_t count) {
  const auto n = static_cast<size_t>(size()), r = static_cast<size_t>(rank());
  return {count * r / n, count * (r + 1) / n};
}

void expect_exact_on_every_rank(braid_dtype_t dt, const void *got, const void *expected,
                                size_t count, const Share &share, const std::string &what) {
  const size_t es = elem_size(dt);
  const auto *g = static_cast<const unsigned char *>(got);
  const auto *e = static_cast<const unsigned char *>(expected);
  uint64_t wrong = 0;
  size_t first = share.first;
  for (size_t i = share.first; i < share.last; ++i)
    if (std::memcmp(g + i * es, e + i * es, es) != 0 && wrong++ == 0) first = i;
  // Both collectives before any assertion: every rank reaches them.
  const bool identical = identical_on_all_ranks(got, count * es);
  uint64_t wrong_anywhere = wrong;
  ASSERT_EQ(braid_allreduce(&wrong_anywhere, &wrong_anywhere, 1, BRAID_UINT64, BRAID_SUM, world()),
            BRAID_SUCCESS)
      << braid_last_error();
  ASSERT_EQ(wrong_anywhere, 0u) << what << ": wrong elements on some rank; this rank's share ["
                                << share.first << ", " << share.last << ") has " << wrong
                                << (wrong != 0
                                        ? ", the first " + std::to_string(first) + " = " +
                                              std::to_string(load(dt, got, first)) + ", expected " +
                                              std::to_string(load(dt, expected, first))
                                        : std::string());
  ASSERT_TRUE(identical) << what << ": the ranks' results differ";
}

void check_allreduce(braid_dtype_t dt, braid_op_t op, size_t count, bool in_place) {
  const size_t es = elem_size(dt);
  const int n = size();
  const Share share = my_share(count);
  std::vector<unsigned char> in(count * es), out(count * es, 0xcd), expected(count * es);
  for (size_t i = 0; i < count; ++i) store(dt, in.data(), i, input_value(dt, op, rank(), i));
  for (size_t i = share.first; i < share.last; ++i) {
    int64_t acc = alone(op, input_value(dt, op, 0, i));
    for (int r = 1; r < n; ++r) acc = combine(op, acc, input_value(dt, op, r, i));
    store(dt, expected.data(), i, acc);
  }
  void *recv = in_place ? in.data() : out.data();
  ASSERT_EQ(braid_allreduce(in.data(), recv, count, dt, op, world()), BRAID_SUCCESS)
      << braid_last_error();
  expect_exact_on_every_rank(dt, recv, expected.data(), count, share,
                             std::string(dtype_str(dt)) + " " + op_str(op) + " count " +
                                 std::to_string(count) + (in_place ? " in place" : ""));
  if (!in_place) {  // the input must be left alone
    for (size_t i = 0; i < std::min<size_t>(count, 64); ++i)
      ASSERT_EQ(load(dt, in.data(), i), static_cast<double>(input_value(dt, op, rank(), i)));
  }
}

}  // namespace mp
