// Soak: `calls` collectives with random size, dtype, op and root (seeded, so a failure can be
// replayed), every result checked on every rank. Usage: braid_soak <calls> <seed>. All ranks
// draw the same random sequence; inputs are small integers so every dtype's result is exact.
#include <braid/braid.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

uint16_t to_half(float f) {  // exact for the small integers used here
  if (f == 0) return std::signbit(f) ? 0x8000 : 0;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int exp = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | ((bits >> 13) & 0x3ff));
}
float from_half(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits = exp == 0 && mant == 0 ? sign : sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

size_t elem_size(braid_dtype_t dt) {
  switch (dt) {
    case BRAID_INT8:
    case BRAID_UINT8:
      return 1;
    case BRAID_FLOAT16:
    case BRAID_BFLOAT16:
      return 2;
    case BRAID_INT32:
    case BRAID_UINT32:
    case BRAID_FLOAT32:
      return 4;
    default:
      return 8;
  }
}

void store(braid_dtype_t dt, void *buf, size_t i, int64_t v) {
  auto *b = static_cast<unsigned char *>(buf) + i * elem_size(dt);
  auto put = [b](auto x) { std::memcpy(b, &x, sizeof x); };
  switch (dt) {
    case BRAID_INT8:
      put(static_cast<int8_t>(v));
      break;
    case BRAID_UINT8:
      put(static_cast<uint8_t>(v));
      break;
    case BRAID_INT32:
      put(static_cast<int32_t>(v));
      break;
    case BRAID_UINT32:
      put(static_cast<uint32_t>(v));
      break;
    case BRAID_INT64:
      put(static_cast<int64_t>(v));
      break;
    case BRAID_UINT64:
      put(static_cast<uint64_t>(v));
      break;
    case BRAID_FLOAT16:
      put(to_half(static_cast<float>(v)));
      break;
    case BRAID_BFLOAT16: {
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put(static_cast<uint16_t>(bits >> 16));
      break;
    }
    case BRAID_FLOAT32:
      put(static_cast<float>(v));
      break;
    default:  // BRAID_FLOAT64
      put(static_cast<double>(v));
      break;
  }
}

double load(braid_dtype_t dt, const void *buf, size_t i) {
  const auto *b = static_cast<const unsigned char *>(buf) + i * elem_size(dt);
  auto get = [b](auto x) {
    std::memcpy(&x, b, sizeof x);
    return x;
  };
  switch (dt) {
    case BRAID_INT8:
      return get(int8_t{});
    case BRAID_UINT8:
      return get(uint8_t{});
    case BRAID_INT32:
      return get(int32_t{});
    case BRAID_UINT32:
      return get(uint32_t{});
    case BRAID_INT64:
      return static_cast<double>(get(int64_t{}));
    case BRAID_UINT64:
      return static_cast<double>(get(uint64_t{}));
    case BRAID_FLOAT16:
      return from_half(get(uint16_t{}));
    case BRAID_BFLOAT16: {
      uint32_t bits = static_cast<uint32_t>(get(uint16_t{})) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case BRAID_FLOAT32:
      return get(float{});
    default:  // BRAID_FLOAT64
      return get(double{});
  }
}

bool is_unsigned(braid_dtype_t dt) {
  return dt == BRAID_UINT8 || dt == BRAID_UINT32 || dt == BRAID_UINT64;
}

// Element i of rank r's input in call `call`: small integers whose sum/product/min/max is exact.
int64_t input(uint64_t seed, uint64_t call, braid_dtype_t dt, braid_op_t op, int r, size_t i) {
  uint64_t h = seed ^ (call * 0x9e3779b97f4a7c15ull) ^ (static_cast<uint64_t>(r) << 40) ^ i;
  h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  const uint64_t k = h >> 40;
  switch (op) {
    case BRAID_SUM:
      return is_unsigned(dt) ? static_cast<int64_t>(k % 4) : static_cast<int64_t>(k % 7) - 3;
    case BRAID_PROD:
      if (k % 8 == 0) return 2;
      if (!is_unsigned(dt) && k % 8 == 1) return -1;
      return 1;
    default:
      return is_unsigned(dt) ? static_cast<int64_t>(k % 100) : static_cast<int64_t>(k % 200) - 100;
  }
}

}  // namespace

int main(int argc, char **argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 100000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  braid_comm_t world;
  if (braid_init(&argc, &argv, &world) != BRAID_SUCCESS) {
    std::fprintf(stderr, "init: %s\n", braid_last_error());
    return 2;
  }
  const int rank = braid_comm_rank(world), size = braid_comm_size(world);
  std::mt19937_64 rng(seed);  // the same sequence on every rank
  static const braid_dtype_t kDtypes[] = {
      BRAID_INT8,   BRAID_UINT8,   BRAID_INT32,    BRAID_UINT32,  BRAID_INT64,
      BRAID_UINT64, BRAID_FLOAT16, BRAID_BFLOAT16, BRAID_FLOAT32, BRAID_FLOAT64};
  static const braid_op_t kOps[] = {BRAID_SUM, BRAID_PROD, BRAID_MIN, BRAID_MAX};
  std::vector<unsigned char> send, recv;
  long errors = 0, checked = 0;
  for (long call = 0; call < calls && errors < 10; ++call) {
    const int kind = static_cast<int>(rng() % 8);  // 0-4 allreduce, 5-6 broadcast, 7 barrier
    // Log-uniform sizes from 1 to 256 Ki elements, so every algorithm of the selection table
    // (small, medium, large) is exercised.
    const size_t count = static_cast<size_t>(std::exp2(static_cast<double>(rng() % 1800) / 100.0));
    const braid_dtype_t dt = kDtypes[rng() % 10];
    const braid_op_t op = kOps[rng() % 4];
    const int root = static_cast<int>(rng() % static_cast<uint64_t>(size));
    const bool in_place = rng() % 2 == 0;
    const size_t es = elem_size(dt);
    braid_result_t rc;
    if (kind == 7) {
      rc = braid_barrier(world);
    } else if (kind >= 5) {
      send.assign(count * es, 0);
      for (size_t i = 0; i < count; ++i)
        store(dt, send.data(), i, rank == root ? input(seed, call, dt, BRAID_MAX, root, i) : 0);
      rc = braid_broadcast(send.data(), count, dt, root, world);
      for (size_t i = 0; rc == BRAID_SUCCESS && i < count; ++i) {
        const double want = static_cast<double>(input(seed, call, dt, BRAID_MAX, root, i));
        if (load(dt, send.data(), i) != want && errors++ < 10)
          std::fprintf(stderr,
                       "rank %d call %ld: broadcast of %zu %d from %d: element %zu is %g, "
                       "expected %g\n",
                       rank, call, count, dt, root, i, load(dt, send.data(), i), want);
      }
      ++checked;
    } else {
      send.assign(count * es, 0);
      recv.assign(count * es, 0);
      for (size_t i = 0; i < count; ++i)
        store(dt, send.data(), i, input(seed, call, dt, op, rank, i));
      void *out = in_place ? send.data() : recv.data();
      rc = braid_allreduce(send.data(), out, count, dt, op, world);
      for (size_t i = 0; rc == BRAID_SUCCESS && i < count; ++i) {
        double want = static_cast<double>(input(seed, call, dt, op, 0, i));
        for (int r = 1; r < size; ++r) {
          const double v = static_cast<double>(input(seed, call, dt, op, r, i));
          want = op == BRAID_SUM    ? want + v
                 : op == BRAID_PROD ? want * v
                 : op == BRAID_MIN  ? std::min(want, v)
                                    : std::max(want, v);
        }
        if (load(dt, out, i) != want && errors++ < 10)
          std::fprintf(stderr,
                       "rank %d call %ld: allreduce of %zu dtype %d op %d: element %zu is "
                       "%g, expected %g\n",
                       rank, call, count, dt, op, i, load(dt, out, i), want);
      }
      ++checked;
    }
    if (rc != BRAID_SUCCESS) {
      std::fprintf(stderr, "rank %d call %ld: %s\n", rank, call, braid_last_error());
      ++errors;
      break;
    }
    if (rank == 0 && (call + 1) % 10000 == 0)
      std::printf("soak: %ld of %ld collectives done\n", call + 1, calls), std::fflush(stdout);
  }
  braid_finalize();
  if (rank == 0)
    std::printf("soak: %ld collectives (%ld results checked), seed %llu, %ld errors\n", calls,
                checked, static_cast<unsigned long long>(seed), errors);
  return errors == 0 ? 0 : 1;
}
