// World: what braid_init builds for a process: the job (from its source: braid's environment,
// PMIx or none), the bootstrap network, and the chosen transport connected to every peer.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "comm/transport.hpp"
#include "config/env_config.hpp"
#include "job/job_source.hpp"
#include "plugin/plugin_loader.hpp"

namespace braid::detail {

struct World {
  EnvConfig config;
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<Transport> transport;
  std::vector<PluginProblem> transport_problems;  // plugins tried before the chosen one
  int numa_node = -1;  // node this rank's CPU affinity lies in; -1 when it spans several
};

// Finds the job's source (job/job_source.hpp), forms the bootstrap and the transport. Throws
// Failure naming the step that failed (source, bootstrap, transport).
std::unique_ptr<World> create_world(const EnvLookup &env);
// The same from a given source (a unique id's group).
std::unique_ptr<World> create_world(std::unique_ptr<JobSource> source);

}  // namespace braid::detail
