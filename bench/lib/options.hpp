// The command line of braid-bench and braid-bench-mpi (one contract, external scripts rely on
// it):
//   allreduce|broadcast|barrier [--transport T] [--algo A] [--dtype D] [--op O] [--root R]
//   [--min-bytes 8] [--max-bytes 64M] [--iters N] [--warmup N] [--mode osu|pipelined]
//   [--check] [--json FILE] [--csv FILE]
// Parsing never exits: bad input comes back as an error message naming the option and value,
// and the program exits 2.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sizes.hpp"
#include "types.hpp"

namespace braid_bench {

struct Options {
  Collective collective = Collective::allreduce;
  std::string transport;  // --transport; empty when not given
  std::string algo;       // --algo; empty when not given
  Dtype dtype = Dtype::float32;
  Op op = Op::sum;
  int root = 0;
  size_t min_bytes = 8;
  size_t max_bytes = 64 * kMiB;
  std::optional<int> iters;   // per size when given, else iterations_for()'s default
  std::optional<int> warmup;  // likewise
  Mode mode = Mode::osu;
  bool check = false;
  // --touch: every rank rewrites its send buffer before each timed call, outside the timed
  // region, as an application that computes its input does (osu mode only).
  bool touch = false;
  std::string json_path;  // empty: no JSON file
  std::string csv_path;   // empty: no CSV file
};

struct ParseResult {
  enum class Status { run, help, error };
  Status status = Status::error;
  Options options;
  std::string error;  // for Status::error, e.g. "--iters 0: must be an integer from 1 to ..."
};

// argv[0] is the program name and is skipped. Options take their value as the next argument
// or after '=' (--iters=10).
ParseResult parse_options(int argc, const char *const *argv);

enum class Flavor { braid, mpi };
// The --help text of `program`; Flavor::mpi describes how braid-bench-mpi treats --transport
// and --algo.
std::string help_text(std::string_view program, Flavor flavor);

}  // namespace braid_bench
