// braid-micro-reduce: the reduction kernels (braid::coll::reduce) per dtype and op, next to
// memcpy on the same buffers, at an L1-, L2-, L3- and DRAM-sized vector (memcpy also at every
// power of two from 1 MiB to 64 MiB: bench/compare compares busbw with it). Google Benchmark;
// see bench/README.md ("Micro benchmarks") for the method and the columns.
//
//   braid-micro-reduce [--benchmark_filter=float32] [--benchmark_min_time=0.5] ...
//
// Every benchmark works on the same three page-aligned buffers of the size given as its
// argument (dst, left, right), allocated once per size and written before the first timed
// call. `reduce` is out of place: dst[i] = op(left[i], right[i]), reading 2 and writing 1
// vector; `memcpy` copies left to dst, reading 1 and writing 1. bytes_per_second is the vector
// size over the time for both (the rate a collective moves user data through the kernel);
// the `traffic` counter adds every byte read and written (3x for reduce, 2x for memcpy).
#include <benchmark/benchmark.h>
#include <braid/braid.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "kernels/dtype.hpp"
#include "kernels/reduce_kernels.hpp"

namespace {

// Per-buffer sizes: three buffers of L1 size fit a 32-48 KiB L1d, three of L2 size a 1 MiB L2,
// three of L3 size a 32 MiB L3, and the DRAM size exceeds every last-level cache in sight.
constexpr int64_t kSizes[] = {8 << 10, 256 << 10, 4 << 20, 64 << 20};
// memcpy's sizes: kSizes and every power of two from 1 MiB to 64 MiB, the single-core copy
// bandwidth bench/compare sets a collective's large-message busbw against.
constexpr int64_t kMemcpySizes[] = {8 << 10, 256 << 10, 1 << 20,  2 << 20, 4 << 20,
                                    8 << 20, 16 << 20,  32 << 20, 64 << 20};

constexpr braid_dtype_t kDtypes[] = {BRAID_INT8,    BRAID_UINT8,  BRAID_INT32,   BRAID_UINT32,
                                     BRAID_INT64,   BRAID_UINT64, BRAID_FLOAT16, BRAID_BFLOAT16,
                                     BRAID_FLOAT32, BRAID_FLOAT64};
constexpr braid_op_t kOps[] = {BRAID_SUM, BRAID_PROD, BRAID_MIN, BRAID_MAX};

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<unsigned char, FreeDeleter>;

struct Buffers {
  Buffer dst, left, right;
};

Buffer allocate(size_t bytes) {
  void *p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) return nullptr;
  return Buffer(static_cast<unsigned char *>(p));
}

// Inputs that keep every floating-point dtype and op finite and normal however often the
// kernel runs (the inputs never change, the kernel is out of place): alternating 16-bit words
// 0x3F80 + k and 0x3C00 + k (k < 8). As float16 they are 1.88 and 1.0 (+ k ulps), as bfloat16
// 1.0 and 2^-7, and every float32 or float64 element built from them has a high word 0x3C0x,
// i.e. 2^-7 or 2^-63 times a mantissa in [1, 2): products and sums stay far from overflow
// and denormals. Integer dtypes accept any bytes.
void fill(unsigned char *left, unsigned char *right, size_t bytes) {
  for (size_t i = 0; i + 1 < bytes; i += 2) {
    const uint16_t base = (i / 2) % 2 ? 0x3C00 : 0x3F80;
    const uint16_t k = static_cast<uint16_t>((i / 2) % 8);
    const uint16_t a = static_cast<uint16_t>(base + k);
    const uint16_t b = static_cast<uint16_t>(base + 7 - k);
    std::memcpy(left + i, &a, 2);
    std::memcpy(right + i, &b, 2);
  }
}

// One set of buffers per size, shared by every benchmark of that size and kept for the run.
Buffers *buffers_for(size_t bytes) {
  static std::map<size_t, Buffers> cache;
  auto it = cache.find(bytes);
  if (it != cache.end()) return &it->second;
  Buffers b{allocate(bytes), allocate(bytes), allocate(bytes)};
  if (!b.dst || !b.left || !b.right) return nullptr;
  fill(b.left.get(), b.right.get(), bytes);
  std::memset(b.dst.get(), 0, bytes);
  return &cache.emplace(bytes, std::move(b)).first->second;
}

void set_rates(benchmark::State &state, size_t bytes, int streams) {
  const auto iters = static_cast<int64_t>(state.iterations());
  state.SetBytesProcessed(iters * static_cast<int64_t>(bytes));
  state.counters["traffic"] =
      benchmark::Counter(static_cast<double>(iters) * static_cast<double>(bytes) * streams,
                         benchmark::Counter::kIsRate);
}

void bm_memcpy(benchmark::State &state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Buffers *b = buffers_for(bytes);
  if (b == nullptr) return state.SkipWithError("out of memory");
  for (auto _ : state) {
    std::memcpy(b->dst.get(), b->left.get(), bytes);
    benchmark::ClobberMemory();
  }
  set_rates(state, bytes, 2);
}

void bm_reduce(benchmark::State &state, braid_dtype_t dtype, braid_op_t op) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const size_t count = bytes / braid::coll::dtype_size(dtype);
  Buffers *b = buffers_for(bytes);
  if (b == nullptr) return state.SkipWithError("out of memory");
  for (auto _ : state) {
    braid::coll::reduce(b->dst.get(), b->left.get(), b->right.get(), count, dtype, op);
    benchmark::ClobberMemory();
  }
  set_rates(state, bytes, 3);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(count));
}

void apply_sizes(benchmark::internal::Benchmark *b) {
  for (int64_t size : kSizes) b->Arg(size);
}

void apply_memcpy_sizes(benchmark::internal::Benchmark *b) {
  for (int64_t size : kMemcpySizes) b->Arg(size);
}

}  // namespace

int main(int argc, char **argv) {
  apply_memcpy_sizes(benchmark::RegisterBenchmark("memcpy", bm_memcpy));
  for (braid_dtype_t dtype : kDtypes)
    for (braid_op_t op : kOps) {
      const std::string name =
          std::string("kernels/") + braid::coll::dtype_name(dtype) + "/" + braid::coll::op_name(op);
      apply_sizes(benchmark::RegisterBenchmark(name.c_str(), bm_reduce, dtype, op));
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
