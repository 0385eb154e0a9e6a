// What the node path costs on this machine, measured (machine_probe.hpp) rather than assumed:
// these machines change from day to day (the core-to-core link especially), and a protocol
// tuned on a fast day is slow on a slow one. braid-tune measures and writes it as JSON;
// BRAID_TUNING_FILE points braid and braid-info at that file.
#pragma once

#include <optional>
#include <string>

namespace braid::detail {

struct MachineProfile {
  int core_a = 0, core_b = 1;    // the two cores measured
  double handoff_rtt_ns = 0;     // one cache line written by a, read by b, and back
  double memcpy_gbps = 0;        // one core, 4 MiB, source and destination in cache or not
  double memcpy_large_gbps = 0;  // one core, 64 MiB (memory-bound)
  double window_copy_gbps = 0;   // a writes 256 KiB windows, b copies them out (pipelined)
  double reduce_gbps = 0;        // one core, float32 sum of two 1 MiB vectors into a third
  double cma_gbps = 0;           // process_vm_readv of 8 MiB from another process, 256 KiB per call
  std::string measured_at;       // UTC, ISO 8601
  std::string host;
};

// {"core_a", "core_b", "handoff_rtt_ns", "memcpy_gbps", ...} on one object.
std::string to_json(const MachineProfile &p);
// The profile in `text` (to_json's output), or nullopt with `why` set.
std::optional<MachineProfile> profile_from_json(const std::string &text, std::string *why);
// BRAID_TUNING_FILE's profile; nullopt when the variable is unset (why empty) or the file is
// unreadable or malformed (why says so).
std::optional<MachineProfile> profile_from_environment(std::string *why);
// Human-readable lines, for braid-info and braid-tune.
std::string describe(const MachineProfile &p);

}  // namespace braid::detail
