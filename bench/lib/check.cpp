#include "check.hpp"

#include <algorithm>
#include <cstring>

namespace braid_bench {
namespace {

// Largest integer every step of a sum may reach while staying exact in d (and distinct from
// the poison pattern).
int64_t exact_limit(Dtype d) {
  switch (d) {
    case Dtype::int8:
      return 127;
    case Dtype::uint8:
      return 254;  // 255 is the poison pattern
    case Dtype::bfloat16:
      return 256;
    case Dtype::float16:
      return 2048;
    default:
      return int64_t{1} << 24;  // float32; the wider types are exact much further
  }
}

// Sum inputs take the values 0 .. r-1.
int64_t sum_range(Dtype d, int ranks) {
  return std::min<int64_t>(4, exact_limit(d) / std::max(ranks, 1) + 1);
}

// The results must not repeat with a period that divides a block: sweep sizes are powers of
// two, and with inputs of period 4 alone every block of a sum came out the same (a
// reduce_scatter that handed every rank block 0 passed). So rank 0 adds i % q for an odd q
// (97 where the dtype leaves room), and min/max and prod carry a term of period 97 too.
constexpr size_t kOddPeriod = 97;
int64_t sum_extra_period(Dtype d, int ranks) {
  const int64_t room = exact_limit(d) - (sum_range(d, ranks) - 1) * std::max(ranks, 1);
  int64_t q = std::clamp<int64_t>(room + 1, 1, static_cast<int64_t>(kOddPeriod));
  if (q % 2 == 0) --q;
  return q;
}

uint16_t half_bits(int64_t v) {
  if (v == 0) return 0;
  const uint16_t sign = v < 0 ? 0x8000 : 0;
  uint64_t m = static_cast<uint64_t>(v < 0 ? -v : v);
  int e = 0;
  while ((m >> (e + 1)) != 0) ++e;  // m in [2^e, 2^(e+1))
  const uint64_t mantissa = e <= 10 ? (m << (10 - e)) & 0x3FF : (m >> (e - 10)) & 0x3FF;
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | mantissa);
}

uint16_t bfloat16_bits(int64_t v) {
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);  // exact: small integers leave the low half zero
}

template <typename T>
void put(void *buf, size_t i, T value) {
  std::memcpy(static_cast<char *>(buf) + i * sizeof(T), &value, sizeof(T));
}

}  // namespace

int64_t input_value(Collective c, Op op, Dtype d, int rank, int ranks, int root, size_t i) {
  if (c == Collective::broadcast)
    return static_cast<int64_t>((5 * i + static_cast<size_t>(root) + 1) % 101);
  if (c == Collective::barrier) return 0;
  const auto r = static_cast<size_t>(rank);
  switch (op) {
    case Op::sum: {
      const auto v = static_cast<int64_t>((i + r) % static_cast<size_t>(sum_range(d, ranks)));
      if (r != 0) return v;
      return v + static_cast<int64_t>(i % static_cast<size_t>(sum_extra_period(d, ranks)));
    }
    case Op::prod: {
      const size_t period = static_cast<size_t>(ranks) + 1;
      if (i % period != r) return 1;
      return 2 + static_cast<int64_t>(((i / period) % kOddPeriod) % 2);
    }
    case Op::min:
    case Op::max:  // the second term is every rank's: it shows in the result at any rank count
      return static_cast<int64_t>((7 * i + 3 * r) % 11 + i % kOddPeriod);
  }
  return 0;
}

int64_t expected_value(Collective c, Op op, Dtype d, int ranks, int root, size_t i) {
  if (c != Collective::allreduce) return input_value(c, op, d, root, ranks, root, i);
  int64_t acc = input_value(c, op, d, 0, ranks, root, i);
  for (int r = 1; r < ranks; ++r) {
    const int64_t v = input_value(c, op, d, r, ranks, root, i);
    switch (op) {
      case Op::sum:
        acc += v;
        break;
      case Op::prod:
        acc *= v;
        break;
      case Op::min:
        acc = std::min(acc, v);
        break;
      case Op::max:
        acc = std::max(acc, v);
        break;
    }
  }
  return acc;
}

void store_value(Dtype d, void *buf, size_t i, int64_t v) {
  switch (d) {
    case Dtype::int8:
      return put(buf, i, static_cast<int8_t>(v));
    case Dtype::int16:
      return put(buf, i, static_cast<int16_t>(v));
    case Dtype::uint16:
      return put(buf, i, static_cast<uint16_t>(v));
    case Dtype::uint8:
      return put(buf, i, static_cast<uint8_t>(v));
    case Dtype::int32:
      return put(buf, i, static_cast<int32_t>(v));
    case Dtype::uint32:
      return put(buf, i, static_cast<uint32_t>(v));
    case Dtype::int64:
      return put(buf, i, static_cast<int64_t>(v));
    case Dtype::uint64:
      return put(buf, i, static_cast<uint64_t>(v));
    case Dtype::float16:
      return put(buf, i, half_bits(v));
    case Dtype::bfloat16:
      return put(buf, i, bfloat16_bits(v));
    case Dtype::float32:
      return put(buf, i, static_cast<float>(v));
    case Dtype::float64:
      return put(buf, i, static_cast<double>(v));
  }
}

void fill_input(Collective c, Op op, Dtype d, int rank, int ranks, int root, void *buf,
                size_t count) {
  if (c == Collective::broadcast && rank != root) {
    poison(buf, count * dtype_size(d));
    return;
  }
  for (size_t i = 0; i < count; ++i)
    store_value(d, buf, i, input_value(c, op, d, rank, ranks, root, i));
}

void fill_expected(Collective c, Op op, Dtype d, int ranks, int root, void *buf, size_t count) {
  for (size_t i = 0; i < count; ++i)
    store_value(d, buf, i, expected_value(c, op, d, ranks, root, i));
}

namespace {

int64_t block_value(int owner, int block, size_t i) {
  return static_cast<int64_t>(
      (5 * i + 7 * static_cast<size_t>(block) + 3 * static_cast<size_t>(owner) + 1) % 101);
}

void fill_block(Dtype d, void *buf, size_t at, size_t count, int owner, int block) {
  for (size_t i = 0; i < count; ++i) store_value(d, buf, at + i, block_value(owner, block, i));
}

}  // namespace

size_t send_elements(Collective c, int ranks, size_t count) {
  const auto n = static_cast<size_t>(ranks);
  switch (c) {
    case Collective::reduce_scatter:
    case Collective::alltoall:
    case Collective::alltoallv:
    case Collective::scatter:
      return count * n;
    default:
      return count;
  }
}

size_t recv_elements(Collective c, int ranks, size_t count) {
  const auto n = static_cast<size_t>(ranks);
  switch (c) {
    case Collective::allgather:
    case Collective::allgatherv:
    case Collective::alltoall:
    case Collective::alltoallv:
    case Collective::gather:
      return count * n;
    default:
      return count;
  }
}

void fill_send(Collective c, Op op, Dtype d, int rank, int ranks, int root, void *buf,
               size_t count) {
  switch (c) {
    case Collective::reduce:
    case Collective::reduce_scatter:
      for (size_t i = 0; i < send_elements(c, ranks, count); ++i)
        store_value(d, buf, i, input_value(Collective::allreduce, op, d, rank, ranks, root, i));
      return;
    case Collective::alltoall:
    case Collective::alltoallv:
      for (int j = 0; j < ranks; ++j)
        fill_block(d, buf, count * static_cast<size_t>(j), count, rank, j);
      return;
    case Collective::scatter:
      if (rank != root) return;
      for (int j = 0; j < ranks; ++j)
        fill_block(d, buf, count * static_cast<size_t>(j), count, root, j);
      return;
    default:  // allgather(v), gather: this rank's block
      fill_block(d, buf, 0, count, rank, 0);
      return;
  }
}

bool fill_expected_recv(Collective c, Op op, Dtype d, int rank, int ranks, int root, void *buf,
                        size_t count) {
  switch (c) {
    case Collective::reduce:
      if (rank != root) return false;
      for (size_t i = 0; i < count; ++i)
        store_value(d, buf, i, expected_value(Collective::allreduce, op, d, ranks, root, i));
      return true;
    case Collective::reduce_scatter:
      for (size_t i = 0; i < count; ++i)
        store_value(d, buf, i,
                    expected_value(Collective::allreduce, op, d, ranks, root,
                                   static_cast<size_t>(rank) * count + i));
      return true;
    case Collective::alltoall:
    case Collective::alltoallv:
      for (int r = 0; r < ranks; ++r)
        fill_block(d, buf, count * static_cast<size_t>(r), count, r, rank);
      return true;
    case Collective::scatter:
      fill_block(d, buf, 0, count, root, rank);
      return true;
    case Collective::gather:
      if (rank != root) return false;
      [[fallthrough]];
    default:  // allgather(v): every rank's block in rank order
      for (int r = 0; r < ranks; ++r)
        fill_block(d, buf, count * static_cast<size_t>(r), count, r, 0);
      return true;
  }
}

void poison(void *buf, size_t bytes) {
  std::memset(buf, 0xFF, bytes);
}

uint64_t count_wrong(const void *expected, const void *actual, Dtype d, size_t count) {
  const size_t es = dtype_size(d);
  const auto *e = static_cast<const unsigned char *>(expected);
  const auto *a = static_cast<const unsigned char *>(actual);
  if (std::memcmp(e, a, count * es) == 0) return 0;
  uint64_t wrong = 0;
  for (size_t i = 0; i < count; ++i)
    if (std::memcmp(e + i * es, a + i * es, es) != 0) ++wrong;
  return wrong;
}

}  // namespace braid_bench
