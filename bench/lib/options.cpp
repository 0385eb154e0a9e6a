#include "options.hpp"

#include <cstdint>
#include <vector>

#include "text.hpp"

namespace braid_bench {
namespace {

constexpr int64_t kMaxIters = 1000000000;
constexpr int64_t kMaxRoot = 1 << 20;

std::string quoted(std::string_view option, std::string_view value) {
  return cat(option, " '", value, "'");
}

// A non-negative decimal integer in [lo, hi], digits only.
std::optional<int> parse_int(std::string_view s, int64_t lo, int64_t hi) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

ParseResult parse_options(int argc, const char *const *argv) {
  ParseResult result;
  Options &o = result.options;
  auto error = [&](std::string message) {
    result.status = ParseResult::Status::error;
    result.error = std::move(message);
    return result;
  };

  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  for (std::string_view a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      result.status = ParseResult::Status::help;
      return result;
    }
  }

  std::optional<Collective> collective;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg.substr(0, 2) != "--") {
      if (!arg.empty() && arg[0] == '-')
        return error(cat("unknown option '", arg, "' (see --help)"));
      if (collective)
        return error(
            cat("unexpected argument '", arg, "': the collective is already ", name(*collective)));
      collective = parse_collective(arg);
      if (!collective)
        return error(cat("'", arg, "' is not a collective; expected one of: ", collective_names()));
      continue;
    }
    std::string_view opt = arg;
    std::optional<std::string_view> inline_value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      opt = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }

    if (opt == "--check") {
      if (inline_value) return error(cat("--check takes no value (got '", arg, "')"));
      o.check = true;
      continue;
    }
    if (opt == "--touch") {
      if (inline_value) return error(cat("--touch takes no value (got '", arg, "')"));
      o.touch = true;
      continue;
    }
    static constexpr std::string_view kValued[] = {
        "--transport", "--algo",  "--dtype",  "--op",   "--root", "--min-bytes",
        "--max-bytes", "--iters", "--warmup", "--mode", "--json", "--csv"};
    bool known = false;
    for (std::string_view k : kValued) known = known || k == opt;
    if (!known) return error(cat("unknown option '", opt, "' (see --help)"));

    std::string_view value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= args.size()) return error(cat(opt, ": missing value"));
      value = args[++i];
    }
    if (value.empty()) return error(cat(opt, ": empty value"));

    if (opt == "--transport") {
      o.transport = value;
    } else if (opt == "--algo") {
      o.algo = value;
    } else if (opt == "--dtype") {
      auto d = parse_dtype(value);
      if (!d) return error(cat(quoted(opt, value), ": not a dtype; valid: ", dtype_names()));
      o.dtype = *d;
    } else if (opt == "--op") {
      auto p = parse_op(value);
      if (!p) return error(cat(quoted(opt, value), ": not an op; valid: ", op_names()));
      o.op = *p;
    } else if (opt == "--mode") {
      auto m = parse_mode(value);
      if (!m) return error(cat(quoted(opt, value), ": not a mode; valid: osu pipelined"));
      o.mode = *m;
    } else if (opt == "--root") {
      auto r = parse_int(value, 0, kMaxRoot);
      if (!r) return error(cat(quoted(opt, value), ": must be a rank, an integer >= 0"));
      o.root = *r;
    } else if (opt == "--iters") {
      auto n = parse_int(value, 1, kMaxIters);
      if (!n) return error(cat(quoted(opt, value), ": must be an integer from 1 to 1000000000"));
      o.iters = *n;
    } else if (opt == "--warmup") {
      auto n = parse_int(value, 0, kMaxIters);
      if (!n) return error(cat(quoted(opt, value), ": must be an integer from 0 to 1000000000"));
      o.warmup = *n;
    } else if (opt == "--min-bytes" || opt == "--max-bytes") {
      std::string why;
      auto s = parse_size(value, &why);
      if (!s) return error(cat(quoted(opt, value), ": ", why));
      (opt == "--min-bytes" ? o.min_bytes : o.max_bytes) = *s;
    } else if (opt == "--json") {
      o.json_path = value;
    } else if (opt == "--csv") {
      o.csv_path = value;
    }
  }

  if (!collective)
    return error(cat("missing the collective: one of ", collective_names(), " (see --help)"));
  o.collective = *collective;
  if (o.min_bytes > o.max_bytes)
    return error(cat("--min-bytes ", o.min_bytes, " is larger than --max-bytes ", o.max_bytes));
  if (o.touch && o.mode != Mode::osu)
    return error(
        "--touch needs --mode osu: pipelined calls run back to back, with no room "
        "outside the timed region to rewrite the buffers");
  result.status = ParseResult::Status::run;
  return result;
}

std::string help_text(std::string_view program, Flavor flavor) {
  const bool mpi = flavor == Flavor::mpi;
  std::string t =
      cat("Usage: ", program, " COLLECTIVE [options]\n\n  COLLECTIVE: ", collective_names(),
          "\n  (the size is one rank's block for allgather(v), reduce_scatter, alltoall(v), "
          "gather\n  and scatter, the whole vector for the others)\n\n");
  if (!mpi) {
    t +=
        cat("Measures the latency and bandwidth of one braid collective over a sweep of message\n"
            "sizes. Start it on every rank with braidrun, e.g.\n"
            "  braidrun -n 4 ",
            program, " allreduce --max-bytes 16M\n\n");
  } else {
    t += cat(
        "The MPI baseline of braid-bench: the same sweep, timing and output, measuring the\n"
        "MPI collective of each (MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather(v),\n"
        "MPI_Reduce_scatter_block, MPI_Alltoall(v), MPI_Gather, MPI_Scatter, MPI_Barrier).\n"
        "Start it with mpirun, e.g.\n"
        "  mpirun -np 4 ",
        program,
        " allreduce --max-bytes 16M\n"
        "(as root add --allow-run-as-root; with more ranks than cores add --oversubscribe).\n\n");
  }
  t += "Options (a value may also follow '=', e.g. --iters=10):\n";
  if (!mpi) {
    t += "  --transport T    Transport to use (auto, ucx, verbs, ...): sets BRAID_TRANSPORT\n"
         "                   before braid_init. Default: BRAID_TRANSPORT from the environment.\n"
         "  --algo A         Force an algorithm: sets BRAID_<COLLECTIVE>_ALGO (e.g.\n"
         "                   BRAID_ALLREDUCE_ALGO, BRAID_BARRIER_ALGO) before braid_init. The\n"
         "                   names are the collective's algorithms that braid-info lists, e.g.\n"
         "                   allreduce: recursive_doubling, rabenseifner, ring, shm,\n"
         "                   hierarchical. Default: automatic selection by message size, rank\n"
         "                   count and node layout (the node-local paths when ranks share a\n"
         "                   node, unless BRAID_INTRANODE=off).\n";
  } else {
    t += "  --transport T    Accepted for command-line compatibility and ignored; the\n"
         "                   transport is reported as \"mpi\".\n"
         "  --algo A         Accepted and ignored (MPI chooses); the algorithm column shows "
         "\"-\".\n";
  }
  t +=
      cat("  --dtype D        Element type: int8 uint8 int16 uint16 int32 uint32 int64 uint64\n"
          "                   float16 bfloat16 float32 float64. Default: float32.\n",
          mpi ? "                   MPI cannot reduce float16 or bfloat16 (data movement works).\n"
              : "",
          "  --op O           Reduction of allreduce, reduce and reduce_scatter: sum prod min\n"
          "                   max. Default: sum.\n");
  t +=
      "  --root R         Root rank of broadcast, reduce, gather and scatter (0 .. ranks-1).\n"
      "                   Default: 0. Ignored by the other collectives.\n"
      "  --min-bytes S    Smallest message size. Default: 8.\n"
      "  --max-bytes S    Largest message size. Default: 64M.\n"
      "                   Sizes are bytes with an optional K, M or G suffix (1024-based), up to\n"
      "                   64G. The sweep doubles from --min-bytes while <= --max-bytes; each size\n"
      "                   is rounded down to a multiple of the element size (at least one\n"
      "                   element). barrier has one row of 0 bytes.\n"
      "  --iters N        Timed iterations per size (>= 1). Default: 1000 up to 8 KiB, then\n"
      "                   1000*sqrt(8KiB/size), at least 10 (11 at 64 MiB).\n"
      "  --warmup N       Untimed iterations before the timed ones (>= 0). Default: a tenth of\n"
      "                   the timed iterations, at least 2.\n"
      "  --mode M         osu (default): every timed call is preceded by a barrier outside the\n"
      "                   timed region, and the latency is the average of the per-call times.\n"
      "                   pipelined: the calls run back to back after one barrier (nccl-tests'\n"
      "                   method), and the latency is the total time / iterations.\n"
      "  --touch          Every rank rewrites its send buffer (a store to each cache line)\n"
      "                   before each timed call, outside the timed region, as an application\n"
      "                   that computes its input does; OSU's benchmarks reuse clean, cached\n"
      "                   buffers, which flatters single-copy and zero-copy paths. osu mode only.\n"
      "  --check          Fill the inputs with per-rank small integers (exact in every dtype),\n"
      "                   run one extra, untimed call per size into poisoned buffers and count\n"
      "                   the result elements that differ from the locally computed expected\n"
      "                   value, summed over all ranks (the errors column). The exit status is 1\n"
      "                   if any element was wrong.\n"
      "  --json FILE      Rank 0 writes the run (collective, transport, ranks, dtype, op, mode,\n"
      "                   machine, build and one object per size in \"rows\") as JSON to FILE.\n"
      "  --csv FILE       Rank 0 writes the rows as CSV with a header line to FILE.\n"
      "  -h, --help       Print this help and exit.\n"
      "\n"
      "Output (rank 0, stdout): a table with one row per size:\n"
      "  bytes       message size in bytes; count: elements of the dtype\n";
  t += mpi ? "  algorithm   \"-\" (MPI does not say which algorithm it used)\n"
           : "  algorithm   the algorithm braid ran: the --algo (or BRAID_*_ALGO) name when\n"
             "              forced, else auto(<name>) with the name braid's selection table\n"
             "              picks for this size and rank count; \"local\" on 1 rank\n";
  t +=
      cat("  avg_us, min_us, max_us\n"
          "              latency in microseconds: each rank's average per call, then the average,\n"
          "              minimum and maximum of those over the ranks\n"
          "  algbw_GB/s  the bytes of the whole result / avg_us (GB = 1e9 bytes): bytes for\n"
          "              allreduce, broadcast and reduce, n * bytes for the block collectives\n"
          "  busbw_GB/s  algbw times nccl-tests' factor: 2(n-1)/n for allreduce, (n-1)/n for\n"
          "              allgather(v), reduce_scatter, alltoall(v), gather and scatter, 1 for\n"
          "              broadcast and reduce\n"
          "  errors      wrong elements over all ranks with --check, else \"-\"\n"
          "barrier moves no data: its bytes and count are 0 and its bandwidths \"-\".\n"
          "Sweeps running longer than a second print progress on stderr (rank 0), e.g.\n"
          "  ",
          program,
          ": 4194304 bytes (20/24)\n"
          "\n"
          "Exit status: 0 on success, 1 if a collective failed or --check found wrong elements,\n"
          "2 for a bad option or value.\n");
  return t;
}

}  // namespace braid_bench
