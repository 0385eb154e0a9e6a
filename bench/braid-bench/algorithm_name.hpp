// The "algorithm" column of braid-bench. braid has no API that reports which algorithm a call
// used, so braid-bench evaluates braid's own selection table: collectives/selection/
// selection.cpp is compiled into braid-bench (see bench/CMakeLists.txt and bench/README.md),
// with the same overrides from BRAID_ALLREDUCE_ALGO / BRAID_BROADCAST_ALGO that libbraid
// applies at braid_init, and the node layout the launcher describes (BRAID_LOCAL_SIZE ranks per
// node, or the BRAID_HOST_ID test override; BRAID_INTRANODE=off). Without that
// (BRAID_BENCH_SELECTION=OFF) the column reads "auto".
#pragma once

#include <cstddef>
#include <string>

#include "types.hpp"

namespace braid_bench {

// The forced algorithm's name when BRAID_*_ALGO is set, else "auto(<name>)" (or "auto" without
// the table); "local" on one rank, where braid runs no algorithm at all.
std::string braid_algorithm(Collective c, size_t bytes, size_t count, int ranks);

// BRAID_<KIND>_ALGO of c (empty for barrier, whose algorithm braid-bench does not force).
std::string override_variable(Collective c);

// Whether `name` is a braid algorithm for c; if not, *why lists the valid names. Always true
// without the table (braid_init then rejects a bad name).
bool braid_algorithm_exists(Collective c, const std::string &name, std::string *why);

}  // namespace braid_bench
