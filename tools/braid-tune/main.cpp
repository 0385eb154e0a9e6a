// braid-tune: measures what the node path costs on this machine (src/tuning/machine_probe.hpp)
// and writes it as JSON for BRAID_TUNING_FILE. These machines change from day to day; measure
// on the day, next to the figures it explains (bench/compare runs it).
//   braid-tune [--cores A,B] [--out FILE]
#include <sched.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "config/env_config.hpp"
#include "error.hpp"
#include "tuning/machine_probe.hpp"

namespace {

void usage(FILE *to) {
  std::fputs(
      "usage: braid-tune [--cores A,B] [--out FILE] [--help]\n"
      "  Measures, in about a second: the round trip of one cache line between cores A and B,\n"
      "  one core's memcpy bandwidth (4 MiB and 64 MiB), the node path's window copy (256 KiB\n"
      "  windows written on A and copied out on B), a float32 sum on one core, and\n"
      "  process_vm_readv (CMA) from another process. Prints them; with --out, writes them as\n"
      "  JSON for BRAID_TUNING_FILE (braid-info shows the file's figures).\n"
      "  --cores A,B  the two cores (default: the first two this process may run on)\n",
      to);
}

// The first two cores in this process's affinity mask.
bool first_two_cores(int *a, int *b) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &set)) (found++ == 0 ? *a : *b) = c;
  return found == 2;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace braid::detail;
  int a = 0, b = 1;
  bool cores_given = false;
  std::string out;
  try {
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
        usage(stdout);
        return 0;
      } else if (!std::strcmp(argv[i], "--cores") && i + 1 < argc) {
        const std::string v = argv[++i];
        const size_t comma = v.find(',');
        if (comma == std::string::npos)
          fail(BRAID_ERR_INVALID_ARGUMENT, "--cores ", v, ": expected A,B");
        a = static_cast<int>(parse_integer(v.substr(0, comma), "--cores", 0, CPU_SETSIZE - 1));
        b = static_cast<int>(parse_integer(v.substr(comma + 1), "--cores", 0, CPU_SETSIZE - 1));
        cores_given = true;
      } else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
        out = argv[++i];
      } else {
        std::fprintf(stderr, "braid-tune: unknown option '%s'\n", argv[i]);
        usage(stderr);
        return 2;
      }
    }
    if (!cores_given && !first_two_cores(&a, &b))
      fail(BRAID_ERR_INVALID_ARGUMENT, "this process may run on one core only: the node path ",
           "between two cores cannot be measured (give --cores A,B)");
    const MachineProfile p = probe_machine(a, b);
    std::fputs(describe(p).c_str(), stdout);
    if (!out.empty()) {
      std::ofstream f(out);
      f << to_json(p);
      if (!f) fail(BRAID_ERR_INVALID_ARGUMENT, "--out ", out, ": cannot be written");
      std::printf("written to %s (use it with BRAID_TUNING_FILE=%s)\n", out.c_str(), out.c_str());
    }
  } catch (const Failure &f) {
    std::fprintf(stderr, "braid-tune: %s\n", f.message().c_str());
    return 2;
  }
  return 0;
}
