// The environment contract: what each rank sees on top of braidrun's own environment.
#pragma once

#include <string>
#include <vector>

#include "hosts.hpp"
#include "job_identity.hpp"
#include "options.hpp"

namespace braidrun {

// `inherited` is braidrun's environment as NAME=VALUE entries (nullptr-terminated, like
// environ). Entries for the BRAID_* variables braidrun sets are replaced, not duplicated, and
// of BRAID_BOOTSTRAP and BRAID_RENDEZVOUS only the one this job uses is left.
std::vector<std::string> rank_environment(const char *const *inherited, const Options &options,
                                          const JobIdentity &job, int rank, int size,
                                          const Placement &placement);

}  // namespace braidrun
