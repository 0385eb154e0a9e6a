// Starting all ranks of a job. A launch either starts every rank or none: if one cannot be
// started, those already running are killed and reaped before the error propagates.
#pragma once

#include <vector>

#include "binding.hpp"
#include "hosts.hpp"
#include "job_identity.hpp"
#include "options.hpp"
#include "process_state.hpp"
#include "spawn.hpp"

namespace braidrun {

// Rank r runs where placement[r] says: local ranks are started directly, the others through
// the launch agent (remote_command.hpp), whose exit then counts as the rank's. The k-th local
// rank gets bindings.ranks[k] (remote ranks are not bound by this braidrun).
std::vector<RankProcess> launch_ranks(const Options &options, const JobIdentity &job,
                                      const std::vector<Placement> &placement,
                                      const InheritedState &inherited, const BindingPlan &bindings);

}  // namespace braidrun
