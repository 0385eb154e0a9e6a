// braidrun's command line: parsing and validation only. Nothing here touches the system, so
// every usage error is found before a single rank is started.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace braidrun {

inline constexpr int kMaxRanks = 4096;
inline constexpr int kUsageErrorExit = 2;

struct Options {
  int ranks = 0;                         // 0 with --host/--hostfile and no -n: one rank per slot
  std::optional<std::string> transport;  // one of auto|ucx|verbs
  std::optional<std::string> timeout;    // positive decimal seconds, passed on exactly as typed
  bool tag_output = false;
  std::optional<std::string> hosts;     // --host h1:2,h2:2, validated syntax (see hosts.hpp)
  std::optional<std::string> hostfile;  // --hostfile FILE, read when the job starts
  std::string launch_agent = "ssh";     // --launch-agent CMD, split at blanks
  std::optional<std::string> bind_to;   // --bind-to none|core|numa (binding.hpp); unset: default
  std::optional<std::string> map_by;    // --map-by core|numa
  bool report_bindings = false;         // --report-bindings
  std::vector<std::string> command;     // program followed by its arguments
};

enum class Action { run, help, version, usage_error };

struct CommandLine {
  Action action = Action::usage_error;
  Options options;    // meaningful when action == run
  std::string error;  // meaningful when action == usage_error; names the offending value
};

// args excludes argv[0]. Parsing stops at the first non-option (or after "--"): everything from
// there on belongs to the program, so `braidrun -n 2 prog -n 5` passes "-n 5" to prog.
CommandLine parse_command_line(std::span<const char *const> args);

}  // namespace braidrun
