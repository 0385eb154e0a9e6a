// How the benchmark was built, for the JSON "build" object and the table header.
#pragma once

#include "report.hpp"

namespace braid_bench {

// braid_version (from braid.h), compiler and build type; `library` is left to the Backend.
BuildInfo this_build();

}  // namespace braid_bench
