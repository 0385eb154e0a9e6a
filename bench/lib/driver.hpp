// One benchmark run: validate what needs the job (--root, output files), sweep the sizes,
// time, check, and report. Shared by braid-bench and braid-bench-mpi.
#pragma once

#include <cstdio>
#include <string>

#include "backend.hpp"
#include "options.hpp"

namespace braid_bench {

struct DriverSettings {
  std::string program = "braid-bench";  // prefixes messages; the table and JSON name it
  std::FILE *out = stdout;              // the table (rank 0)
  std::FILE *err = stderr;              // messages and progress (rank 0)
  double progress_after_s = 1.0;        // progress lines once the sweep has run this long
};

// Collective over the backend's ranks. Returns the exit status: 0 success; 1 when --check
// counted wrong elements or a file could not be written; 2 when --root is out of range or an
// output file cannot be opened (every rank returns 2; rank 0 says why). Failed collectives
// throw std::runtime_error from the backend.
int run_benchmark(const Options &options, Backend &backend, const DriverSettings &settings);

// Rank 0 of a job that has not started yet: the launcher's rank variable (`rank_variable`, e.g.
// BRAID_RANK) is unset or "0". Lets usage errors be printed once instead of once per rank.
bool is_first_rank(const char *rank_variable);

}  // namespace braid_bench
