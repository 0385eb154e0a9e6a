// BRAID_CMA: whether node-local collectives may copy straight out of a peer's ordinary buffer
// with cross-memory attach (process_vm_readv), one copy instead of two through the segment.
#pragma once

#include <optional>
#include <string>

namespace braid::detail {

enum class CmaMode {
  off,        // never: the windows (or the in-place path on braid_mem_alloc buffers)
  automatic,  // where this rank measured it faster than the windows lately (the default)
  always,     // wherever the kernel allows it (tests, comparisons)
};

// The mode `value` names ("auto", "on", "off"; unset or empty: auto), or nullopt.
std::optional<CmaMode> cma_mode_from(const std::optional<std::string> &value);

}  // namespace braid::detail
