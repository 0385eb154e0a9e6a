#include "comm/world.hpp"

#include <chrono>

#include "error.hpp"
#include "log.hpp"

namespace braid::detail {

std::unique_ptr<World> create_world(const EnvConfig &config) {
  auto world = std::make_unique<World>();
  world->config = config;
  log_set_rank(config.rank);
  const auto t0 = std::chrono::steady_clock::now();

  BootstrapConfig bc{config.rank,           config.size,    config.bootstrap_host,
                     config.bootstrap_port, config.job_key, config.timeout_s};
  world->bootstrap = make_tcp_bootstrap(bc);
  const auto t1 = std::chrono::steady_clock::now();

  Plugin plugin = select_transport(config.transport, &world->transport_problems);
  for (const PluginProblem &p : world->transport_problems)
    log(LogLevel::info, "transport ", p.name, " not used: ", p.detail);
  world->transport = std::make_unique<Transport>(
      std::move(plugin), *world->bootstrap, config.local_rank, config.local_size, config.timeout_s);
  const auto t2 = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  log(LogLevel::info, "rank ", config.rank, " of ", config.size, ": bootstrap ",
      config.size > 1 ? cat(config.bootstrap_host, ":", config.bootstrap_port) : "(single rank)",
      " in ", ms(t1 - t0), " ms; transport ", world->transport->name(), " (",
      world->transport->path(), ") ready in ", ms(t2 - t1), " ms");
  return world;
}

}  // namespace braid::detail
