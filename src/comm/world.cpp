#include "comm/world.hpp"

#include <chrono>

#include "error.hpp"
#include "job/job_source.hpp"
#include "log.hpp"
#include "memory/topology.hpp"

namespace braid::detail {

std::unique_ptr<World> create_world(const EnvLookup &env) {
  return create_world(find_job_source(env));
}

std::unique_ptr<World> create_world(std::unique_ptr<JobSource> source) {
  auto world = std::make_unique<World>();
  const auto t0 = std::chrono::steady_clock::now();
  const EnvConfig &config = source->config();
  world->config = config;
  log_set_rank(config.rank);
  log(LogLevel::info, "job source: ", source->name(), ": rank ", config.rank, " of ", config.size,
      ", local rank ", config.local_rank, " of ", config.local_size);
  world->bootstrap = source->form_bootstrap();
  world->config.job_key = config.job_key;  // under PMIx, rank 0 made it while forming the job
  const auto t1 = std::chrono::steady_clock::now();

  try {
    world->numa_node = Topology::get().bound_node();
  } catch (const Failure &f) {
    log(LogLevel::warn, "no NUMA placement: ", f.message());
  }
  log(LogLevel::info, "NUMA node ", world->numa_node,
      world->numa_node < 0 ? " (not bound to one node): internal buffers are not bound"
                           : ": internal buffers are bound to it");

  Plugin plugin = select_transport(config.transport, &world->transport_problems);
  for (const PluginProblem &p : world->transport_problems)
    log(LogLevel::info, "transport ", p.name, " not used: ", p.detail);
  world->transport =
      std::make_unique<Transport>(std::move(plugin), *world->bootstrap, config.local_rank,
                                  config.local_size, config.timeout_s, world->numa_node);
  const auto t2 = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  log(LogLevel::info, "rank ", config.rank, " of ", config.size, ": bootstrap ",
      config.size > 1 ? source->root_address() : "(single rank)", " in ", ms(t1 - t0),
      " ms; transport ", world->transport->name(), " (", world->transport->path(), ") ready in ",
      ms(t2 - t1), " ms");
  return world;
}

}  // namespace braid::detail
