// Starting all ranks of a job. A launch either starts every rank or none: if one cannot be
// started, those already running are killed and reaped before the error propagates.
#pragma once

#include <vector>

#include "job_identity.hpp"
#include "options.hpp"
#include "process_state.hpp"
#include "spawn.hpp"

namespace braidrun {

std::vector<RankProcess> launch_ranks(const Options &options, const JobIdentity &job,
                                      const InheritedState &inherited);

}  // namespace braidrun
