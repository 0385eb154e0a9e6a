// Finds and opens transport plugins (libbraid-transport-<name>.so) with dlopen, probing the
// newest ABI version first. Only absolute directories are searched, never the current one.
#pragma once

#include <braid/transport.h>

#include <string>
#include <vector>

namespace braid::detail {

struct Plugin {
  std::string name;
  std::string path;
  void *handle = nullptr;  // dlopen handle; kept open for the life of the process
  const braid_transport_v2_t *ops = nullptr;
  int abi = 0;  // the ABI version taken (the newest both sides know)
};

// Why one plugin could not be used, for error messages and braid-info.
struct PluginProblem {
  std::string name;
  std::string detail;  // e.g. "/usr/lib/libbraid-transport-verbs.so: no active RDMA port"
};

// Directory of libbraid (the install libdir), then the configured install libdir, then each
// absolute entry of BRAID_PLUGIN_PATH. Relative entries are skipped with a warning.
std::vector<std::string> plugin_search_dirs();

// Opens the plugin `name` from the first directory that has it. On failure returns false and
// describes every file tried in *why.
bool open_plugin(const std::string &name, Plugin *out, std::string *why);

// Every plugin file name found in the search directories ("ucx", "verbs", ...), sorted.
std::vector<std::string> discover_plugins();

// Resolves BRAID_TRANSPORT: "auto" tries verbs (when its probe finds an active port) then
// ucx; an explicit name must load and probe successfully. Throws Failure naming every attempt.
Plugin select_transport(const std::string &requested, std::vector<PluginProblem> *problems);

}  // namespace braid::detail
