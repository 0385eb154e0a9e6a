#include "build_info.hpp"

#include <braid/braid.h>

#include <string>

#include "text.hpp"

#ifndef BRAID_BENCH_BUILD_TYPE
#define BRAID_BENCH_BUILD_TYPE "unknown"
#endif

namespace braid_bench {

BuildInfo this_build() {
  BuildInfo b;
  b.braid_version = cat(BRAID_VERSION_MAJOR, '.', BRAID_VERSION_MINOR, '.', BRAID_VERSION_PATCH);
#if defined(__clang__)
  b.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  b.compiler = "g++ " __VERSION__;
#else
  b.compiler = "unknown";
#endif
  b.build_type = *BRAID_BENCH_BUILD_TYPE ? BRAID_BENCH_BUILD_TYPE : "none";
  return b;
}

}  // namespace braid_bench
