// The environment contract: what each rank sees on top of braidrun's own environment.
#pragma once

#include <string>
#include <vector>

#include "job_identity.hpp"
#include "options.hpp"

namespace braidrun {

// `inherited` is braidrun's environment as NAME=VALUE entries (nullptr-terminated, like
// environ). Entries for the BRAID_* variables braidrun sets are replaced, not duplicated.
std::vector<std::string> rank_environment(const char *const *inherited, const Options &options,
                                          const JobIdentity &job, int rank);

}  // namespace braidrun
