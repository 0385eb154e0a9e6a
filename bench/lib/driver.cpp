#include "driver.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "bandwidth.hpp"
#include "check.hpp"
#include "sizes.hpp"
#include "text.hpp"
#include "timing.hpp"

namespace braid_bench {
namespace {

struct FreeDeleter {
  Backend *owner = nullptr;  // set when the backend allocated the buffer
  void operator()(void *p) const {
    if (owner != nullptr)
      owner->free_buffer(p);
    else
      std::free(p);
  }
};
using Buffer = std::unique_ptr<void, FreeDeleter>;

// Page-aligned, like the buffers applications register with NICs; from the backend's allocator
// when it has one (braid-bench: BRAID_BENCH_BUFFER_NODE).
Buffer allocate(Backend &backend, size_t bytes) {
  constexpr size_t kPage = 4096;
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  const size_t n = rounded > 0 ? rounded : kPage;
  void *p = backend.alloc_buffer(n);
  FreeDeleter deleter{p != nullptr ? &backend : nullptr};
  if (p == nullptr) p = std::aligned_alloc(kPage, n);
  if (p == nullptr) throw std::runtime_error(cat("cannot allocate ", bytes, " bytes"));
  std::memset(p, 0, n);  // touch every page before timing
  return Buffer(p, deleter);
}

struct OutputFile {
  std::string option;
  std::string path;
  std::FILE *file = nullptr;
  ~OutputFile() {
    if (file) std::fclose(file);
  }
};

// Collective: true on every rank when `failed` is true on any.
bool any_rank(Backend &backend, bool failed) {
  double flag = failed ? 1.0 : 0.0;
  backend.allreduce(&flag, &flag, 1, Dtype::float64, Op::max);
  return flag != 0.0;
}

RunInfo describe_run(const Options &o, Backend &backend, const std::string &program) {
  RunInfo info;
  info.program = program;
  info.collective = o.collective;
  info.transport = backend.transport();
  info.ranks = backend.size();
  info.dtype = o.collective == Collective::barrier ? "-" : name(o.dtype);
  info.op = reduces(o.collective) ? name(o.op) : "-";
  info.mode = o.mode;
  info.touch = o.touch;
  info.check = o.check;
  info.machine = this_machine();
  info.build = backend.build_info();
  return info;
}

}  // namespace

bool is_first_rank(const char *rank_variable) {
  const char *v = std::getenv(rank_variable);
  return v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0;
}

int run_benchmark(const Options &o, Backend &backend, const DriverSettings &settings) {
  const auto start = std::chrono::steady_clock::now();
  const bool lead = backend.rank() == 0;
  const int ranks = backend.size();
  const char *program = settings.program.c_str();

  if (rooted(o.collective) && o.root >= ranks) {
    // Every rank says it: the first to exit gets the others stopped by braidrun.
    std::fprintf(settings.err, "%s: --root '%d': out of range for %d rank%s (0 .. %d)\n", program,
                 o.root, ranks, ranks == 1 ? "" : "s", ranks - 1);
    return 2;
  }

  std::vector<OutputFile> files;
  if (!o.json_path.empty()) files.push_back({"--json", o.json_path});
  if (!o.csv_path.empty()) files.push_back({"--csv", o.csv_path});
  bool open_failed = false;
  if (lead) {
    for (OutputFile &f : files) {
      f.file = std::fopen(f.path.c_str(), "w");
      if (f.file == nullptr) {
        std::fprintf(settings.err, "%s: %s '%s': cannot open for writing: %s\n", program,
                     f.option.c_str(), f.path.c_str(), std::strerror(errno));
        open_failed = true;
      }
    }
  }
  if (any_rank(backend, open_failed)) return 2;

  const RunInfo info = describe_run(o, backend, settings.program);
  const size_t es = dtype_size(o.dtype);
  const std::vector<size_t> sizes = o.collective == Collective::barrier
                                        ? std::vector<size_t>{0}
                                        : size_list(o.min_bytes, o.max_bytes, es);
  if (sizes.empty()) throw std::logic_error("empty size list");  // parse_options prevents it
  const size_t max_bytes = sizes.back();
  const Collective c = o.collective;
  // allreduce, broadcast and barrier as before; the rest of the set through check.hpp's
  // layouts (send and receive buffers of several blocks).
  const bool classic =
      c == Collective::allreduce || c == Collective::broadcast || c == Collective::barrier;
  const size_t max_count = max_bytes / es;
  const size_t send_bytes = classic ? max_bytes : send_elements(c, ranks, max_count) * es;
  const size_t recv_bytes = c == Collective::allreduce ? max_bytes
                            : classic                  ? 0
                                                       : recv_elements(c, ranks, max_count) * es;
  Buffer send = allocate(backend, send_bytes);
  Buffer recv = allocate(backend, recv_bytes);
  Buffer expected = allocate(backend, o.check ? std::max(max_bytes, classic ? 0 : recv_bytes) : 0);
  // The v-variants run with every rank's count equal (as OSU's do), blocks in rank order.
  std::vector<size_t> vcounts(static_cast<size_t>(ranks)), vdispls(static_cast<size_t>(ranks));

  if (lead) {
    std::fputs(table_header(info).c_str(), settings.out);
    std::fflush(settings.out);
  }
  std::vector<Row> rows;
  uint64_t total_errors = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const size_t bytes = sizes[k];
    const size_t count = bytes / es;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (lead && elapsed >= settings.progress_after_s) {
      std::fprintf(settings.err, "%s: %zu bytes (%zu/%zu)\n", program, bytes, k + 1, sizes.size());
      std::fflush(settings.err);
    }

    for (size_t r = 0; r < vcounts.size(); ++r) {
      vcounts[r] = count;
      vdispls[r] = r * count;
    }
    // The same inputs whether or not --check: the reduction sees identical values either way.
    auto prepare = [&] {
      if (c == Collective::allreduce) {
        fill_input(c, o.op, o.dtype, backend.rank(), ranks, o.root, send.get(), count);
        poison(recv.get(), bytes);
      } else if (c == Collective::broadcast) {
        fill_input(c, o.op, o.dtype, backend.rank(), ranks, o.root, send.get(), count);
      } else if (!classic) {
        fill_send(c, o.op, o.dtype, backend.rank(), ranks, o.root, send.get(), count);
        poison(recv.get(), recv_elements(c, ranks, count) * es);
      }
    };
    const bool root = backend.rank() == o.root;
    auto call = [&] {
      switch (c) {
        case Collective::allreduce:
          return backend.allreduce(send.get(), recv.get(), count, o.dtype, o.op);
        case Collective::broadcast:
          return backend.broadcast(send.get(), count, o.dtype, o.root);
        case Collective::barrier:
          return backend.barrier();
        case Collective::reduce:
          return backend.reduce(send.get(), root ? recv.get() : nullptr, count, o.dtype, o.op,
                                o.root);
        case Collective::allgather:
          return backend.allgather(send.get(), recv.get(), count, o.dtype);
        case Collective::allgatherv:
          return backend.allgatherv(send.get(), count, recv.get(), vcounts.data(), vdispls.data(),
                                    o.dtype);
        case Collective::reduce_scatter:
          return backend.reduce_scatter(send.get(), recv.get(), count, o.dtype, o.op);
        case Collective::alltoall:
          return backend.alltoall(send.get(), recv.get(), count, o.dtype);
        case Collective::alltoallv:
          return backend.alltoallv(send.get(), vcounts.data(), vdispls.data(), recv.get(),
                                   vcounts.data(), vdispls.data(), o.dtype);
        case Collective::gather:
          return backend.gather(send.get(), root ? recv.get() : nullptr, count, o.dtype, o.root);
        case Collective::scatter:
          return backend.scatter(root ? send.get() : nullptr, recv.get(), count, o.dtype, o.root);
      }
    };
    prepare();
    // A store to every cache line of what this rank sends (its values unchanged, so --check
    // still holds): the lines are then modified in this core's cache, as after a computation.
    const size_t touched = classic ? bytes : send_elements(c, ranks, count) * es;
    auto touch = [&] {
      volatile unsigned char *p = static_cast<unsigned char *>(send.get());
      for (size_t i = 0; i < touched; i += 64) p[i] = p[i];
    };
    const Iterations it = iterations_for(bytes, o.iters, o.warmup);
    const double seconds =
        time_per_call(backend, o.mode, it.iters, it.warmup, call,
                      o.touch ? std::function<void()>(touch) : std::function<void()>());
    const Latency lat = across_ranks(backend, seconds);

    Row row;
    row.bytes = bytes;
    row.count = count;
    row.algorithm = backend.algorithm(o.collective, bytes, count);
    row.avg_us = lat.avg_us;
    row.min_us = lat.min_us;
    row.max_us = lat.max_us;
    row.algbw_gbps = algbw_gbps(algbw_bytes(c, ranks, bytes), lat.avg_us * 1e-6);
    row.busbw_gbps = busbw_gbps(o.collective, ranks, bytes, lat.avg_us * 1e-6);
    row.iters = it.iters;
    row.warmup = it.warmup;

    if (o.check && c != Collective::barrier) {
      // One more call, untimed, into poisoned output: an element it does not write is wrong.
      uint64_t wrong = 0;
      prepare();
      call();
      if (classic) {
        fill_expected(c, o.op, o.dtype, ranks, o.root, expected.get(), count);
        const void *result = c == Collective::allreduce ? recv.get() : send.get();
        wrong = count_wrong(expected.get(), result, o.dtype, count);
      } else if (fill_expected_recv(c, o.op, o.dtype, backend.rank(), ranks, o.root, expected.get(),
                                    count)) {
        wrong = count_wrong(expected.get(), recv.get(), o.dtype, recv_elements(c, ranks, count));
      }
      backend.allreduce(&wrong, &wrong, 1, Dtype::uint64, Op::sum);
      row.errors = wrong;
      total_errors += wrong;
    }
    if (lead) {
      std::fputs(format_table_row(info, row).c_str(), settings.out);
      std::fflush(settings.out);
    }
    rows.push_back(std::move(row));
  }

  int status = total_errors > 0 ? 1 : 0;
  if (lead && total_errors > 0)
    std::fprintf(settings.err, "%s: --check: %llu wrong element%s\n", program,
                 static_cast<unsigned long long>(total_errors), total_errors == 1 ? "" : "s");
  for (OutputFile &f : files) {
    if (!lead) continue;
    const std::string text = f.option == "--json" ? format_json(info, rows) : format_csv(rows);
    const bool wrote = std::fputs(text.c_str(), f.file) >= 0;
    const bool closed = std::fclose(f.file) == 0;
    f.file = nullptr;
    if (!wrote || !closed) {
      std::fprintf(settings.err, "%s: %s '%s': write failed: %s\n", program, f.option.c_str(),
                   f.path.c_str(), std::strerror(errno));
      status = 1;
    }
  }
  return status;
}

}  // namespace braid_bench
