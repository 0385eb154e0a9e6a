// braid-bench-mpi: braid-bench's sweep, timing and output over MPI_Allreduce / MPI_Bcast /
// MPI_Barrier, the baseline to compare braid with.
//   mpirun -np N braid-bench-mpi allreduce|broadcast|barrier [options]   (--help for all)
// The same source is built once per MPI library (bench/mpi/CMakeLists.txt); each build names
// itself with BRAID_BENCH_MPI_PROGRAM (braid-bench-mpich for the MPICH one).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "driver.hpp"
#include "mpi_backend.hpp"
#include "options.hpp"

#ifndef BRAID_BENCH_MPI_PROGRAM
#define BRAID_BENCH_MPI_PROGRAM "braid-bench-mpi"
#endif

namespace {

constexpr const char *kProgram = BRAID_BENCH_MPI_PROGRAM;

// Rank 0 before MPI_Init, from the variables the common launchers set.
bool first_rank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *v = std::getenv(var); v != nullptr && *v != '\0')
      return braid_bench::is_first_rank(var);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace braid_bench;
  const bool first = first_rank();
  const ParseResult parsed = parse_options(argc, argv);
  if (parsed.status == ParseResult::Status::help) {
    if (first) std::fputs(help_text(kProgram, Flavor::mpi).c_str(), stdout);
    return 0;
  }
  if (parsed.status == ParseResult::Status::error) {
    if (first) std::fprintf(stderr, "%s: %s\n", kProgram, parsed.error.c_str());
    return 2;
  }
  const Options &o = parsed.options;
  if (auto why = mpi_unsupported(o.collective, o.dtype)) {
    if (first)
      std::fprintf(stderr, "%s: --dtype '%s': %s\n", kProgram, name(o.dtype), why->c_str());
    return 2;
  }

  MPI_Init(&argc, &argv);
  int status;
  try {
    MpiBackend backend;
    DriverSettings settings;
    settings.program = kProgram;
    status = run_benchmark(o, backend, settings);
  } catch (const std::exception &e) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "%s: rank %d: %s\n", kProgram, rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  MPI_Finalize();
  return status;
}
