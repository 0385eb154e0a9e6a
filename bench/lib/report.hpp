// The results of a run and their three formats: the stdout table, JSON (--json) and CSV (--csv).
// Pure formatting into strings; the driver decides where they go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "machine.hpp"
#include "types.hpp"

namespace braid_bench {

struct Row {
  size_t bytes = 0;
  size_t count = 0;
  std::string algorithm;
  double avg_us = 0, min_us = 0, max_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;
  uint64_t errors = 0;  // wrong elements over all ranks; 0 when not checked
  int iters = 0;
  int warmup = 0;
};

struct BuildInfo {
  std::string braid_version;  // of the braid tree the benchmark was built from
  std::string compiler;
  std::string build_type;
  std::string library;  // what was measured: "braid 0.1.0" or the MPI library's version line
};

struct RunInfo {
  std::string program;  // braid-bench or braid-bench-mpi
  Collective collective = Collective::allreduce;
  std::string transport;
  int ranks = 1;
  std::string dtype;  // "-" where the collective has none (barrier)
  std::string op;     // "-" where the collective has none (broadcast, barrier)
  Mode mode = Mode::osu;
  bool check = false;
  bool touch = false;
  MachineInfo machine;
  BuildInfo build;
};

// JSON string literal contents: quotes, backslashes and control characters escaped.
std::string json_escape(std::string_view s);

// {"collective", "transport", "ranks", "dtype", "op", "mode", "check", "touch", "program",
// "machine",
//  "build", "rows": [{"bytes", "count", "algorithm", "avg_us", "min_us", "max_us",
//  "algbw_gbps", "busbw_gbps", "errors", "iters", "warmup"}, ...]}
std::string format_json(const RunInfo &info, const std::vector<Row> &rows);

// bytes,count,algorithm,avg_us,min_us,max_us,algbw_gbps,busbw_gbps,errors,iters,warmup
std::string csv_header();
std::string format_csv_row(const Row &row);
std::string format_csv(const std::vector<Row> &rows);  // header + rows, '\n'-terminated

// Comment lines describing the run, then the column header.
std::string table_header(const RunInfo &info);
// One aligned line. Bandwidths are "-" for barrier, errors "-" without --check.
std::string format_table_row(const RunInfo &info, const Row &row);

}  // namespace braid_bench
