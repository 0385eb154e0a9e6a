// braid-bench: latency and bandwidth of braid's collectives over a sweep of message sizes.
//   braidrun -n N braid-bench allreduce|broadcast|barrier [options]   (--help for all)
#include <braid/braid.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "algorithm_name.hpp"
#include "braid_backend.hpp"
#include "driver.hpp"
#include "options.hpp"

namespace {

constexpr const char *kProgram = "braid-bench";

}  // namespace

int main(int argc, char **argv) {
  using namespace braid_bench;
  // Every rank parses the same command line. Only the first prints help, but every rank reports
  // a bad option: under braidrun, the first rank to exit gets the others stopped, so a message
  // left to rank 0 alone could be lost.
  const bool first = is_first_rank("BRAID_RANK");
  const ParseResult parsed = parse_options(argc, argv);
  if (parsed.status == ParseResult::Status::help) {
    if (first) std::fputs(help_text(kProgram, Flavor::braid).c_str(), stdout);
    return 0;
  }
  if (parsed.status == ParseResult::Status::error) {
    std::fprintf(stderr, "%s: %s\n", kProgram, parsed.error.c_str());
    return 2;
  }
  const Options &o = parsed.options;

  if (!o.algo.empty()) {
    std::string why;
    if (!braid_algorithm_exists(o.collective, o.algo, &why)) {
      std::fprintf(stderr, "%s: --algo '%s': %s\n", kProgram, o.algo.c_str(), why.c_str());
      return 2;
    }
    setenv(override_variable(o.collective).c_str(), o.algo.c_str(), 1);
  }
  if (!o.transport.empty()) setenv("BRAID_TRANSPORT", o.transport.c_str(), 1);

  braid_comm_t world = nullptr;
  const braid_result_t r = braid_init(&argc, &argv, &world);
  if (r != BRAID_SUCCESS) {
    // A transport that cannot be loaded (BRAID_ERR_UNSUPPORTED names what was tried) or an
    // algorithm braid rejects is a bad option value when the option was given.
    const bool option_error =
        (!o.transport.empty() && (r == BRAID_ERR_UNSUPPORTED || r == BRAID_ERR_TRANSPORT)) ||
        (!o.algo.empty() && r == BRAID_ERR_INVALID_ARGUMENT);
    if (!o.transport.empty())
      std::fprintf(stderr, "%s: braid_init failed with --transport '%s': %s\n", kProgram,
                   o.transport.c_str(), braid_last_error());
    else
      std::fprintf(stderr, "%s: braid_init failed: %s\n", kProgram, braid_last_error());
    return option_error ? 2 : 1;
  }

  BraidBackend backend(world);
  DriverSettings settings;
  settings.program = kProgram;
  int status;
  try {
    status = run_benchmark(o, backend, settings);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: rank %d: %s\n", kProgram, backend.rank(), e.what());
    return 1;  // no braid_finalize: the other ranks may be stuck in a collective
  }
  braid_finalize();
  return status;
}
