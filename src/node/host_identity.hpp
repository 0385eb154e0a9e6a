// What says two ranks can map the same memory: the host's name plus the kernel's boot id (a
// hostname alone can repeat across containers or cloned VMs; the boot id changes per boot).
// BRAID_HOST_ID replaces it, so tests can split the ranks of one machine into fake nodes: a
// single name is this rank's host; a comma-separated list names the host of every rank in turn
// (rank r takes entry r modulo the list's length), e.g. "a,a,b,b" or "a,b" (interleaved).
#pragma once

#include <string>

#include "config/env_config.hpp"

namespace braid::detail {

std::string local_host_identity(const EnvLookup &env, int rank);

}  // namespace braid::detail
