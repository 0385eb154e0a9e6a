// Measures a MachineProfile (machine_profile.hpp) in a few hundred milliseconds: two threads
// pinned to two cores for the handoff and the pipelined window copy, one core for memcpy and
// reduce, a forked process for cross-memory attach.
#pragma once

#include "tuning/machine_profile.hpp"

namespace braid::detail {

// Throws Failure when a core cannot be used (no such core, affinity refused).
MachineProfile probe_machine(int core_a, int core_b);

}  // namespace braid::detail
