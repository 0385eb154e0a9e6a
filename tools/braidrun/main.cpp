// braidrun: starts the N ranks of a braid job, on this machine or on the hosts given, and
// supervises them. The command line and environment contract are documented in help.cpp
// (braidrun --help).
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "binding.hpp"
#include "help.hpp"
#include "hosts.hpp"
#include "job_guard.hpp"
#include "job_identity.hpp"
#include "launch.hpp"
#include "net/rendezvous_service.hpp"
#include "options.hpp"
#include "output.hpp"
#include "process_state.hpp"
#include "supervisor.hpp"

namespace {

std::vector<braidrun::Placement> place(const braidrun::Options &options) {
  if (options.hosts) {
    std::string error;
    return braidrun::place_ranks(*braidrun::parse_host_list(*options.hosts, &error), options.ranks);
  }
  if (options.hostfile)
    return braidrun::place_ranks(braidrun::read_hostfile(*options.hostfile), options.ranks);
  return braidrun::place_locally(options.ranks);
}

// Computes every local rank's binding and, with --report-bindings, prints it before any starts.
braidrun::BindingPlan plan(const braidrun::Options &options,
                           const std::vector<braidrun::Placement> &placement) {
  const int local = static_cast<int>(std::count_if(
      placement.begin(), placement.end(), [](const braidrun::Placement &p) { return p.local; }));
  std::optional<braidrun::BindTo> bind_to;
  std::optional<braidrun::MapBy> map_by;
  if (options.bind_to) bind_to = braidrun::parse_bind_to(*options.bind_to);
  if (options.map_by) map_by = braidrun::parse_map_by(*options.map_by);
  hwloc_topology_t topo = braidrun::load_topology();
  braidrun::BindingPlan plan = braidrun::plan_bindings(topo, bind_to, map_by, local);
  hwloc_topology_destroy(topo);
  if (options.report_bindings) {
    std::string text = "braidrun: binding policy " + plan.policy + "\n";
    size_t k = 0;
    for (size_t rank = 0; rank < placement.size(); ++rank) {
      if (!placement[rank].local) {
        text += "braidrun: rank " + std::to_string(rank) + " on " + placement[rank].host +
                ": not bound by this braidrun\n";
        continue;
      }
      const braidrun::RankBinding &b = plan.ranks[k++];
      text += "braidrun: rank " + std::to_string(rank) + ": " +
              (b.bound ? "bound to " + b.target : std::string("not bound")) + ": cpus " +
              b.cpu_list + " (cpuset " + b.cpuset_hex + "), NUMA node " + std::to_string(b.node) +
              (b.node < 0 ? " (spans several)" : "") + "\n";
    }
    braidrun::write_all(STDERR_FILENO, text);
  }
  return plan;
}

bool verbose() {
  const char *debug = std::getenv("BRAID_DEBUG");
  return debug != nullptr && (std::strcmp(debug, "info") == 0 || std::strcmp(debug, "trace") == 0);
}

int run_job(const braidrun::Options &options) {
  const std::vector<braidrun::Placement> placement = place(options);
  const bool all_local = std::all_of(placement.begin(), placement.end(),
                                     [](const braidrun::Placement &p) { return p.local; });
  // Signals are blocked before the first fork (and before the rendezvous thread, which
  // inherits the mask) so none that arrives during the launch is lost: it waits in the
  // signalfd until supervision starts.
  const braidrun::InheritedState inherited = braidrun::prepare_launcher_process();
  braid::net::UniqueFd signal_fd = braidrun::open_signal_fd();
  // Before the rendezvous thread: the guard's child allocates.
  braidrun::JobGuard guard;
  // What a rank leaves behind when it exits comes to braidrun rather than to init, so its end
  // wakes the supervisor (best effort: only a quicker wake-up depends on it).
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // On one machine rank 0 listens on loopback at a port braidrun picks. Across hosts neither
  // its address nor a free port there is known here, so rank 0 registers them with braidrun.
  braidrun::JobIdentity job;
  std::unique_ptr<braid::net::RendezvousService> rendezvous;
  if (all_local) {
    job = braidrun::make_job_identity();
  } else {
    job = braidrun::make_job_key();
    rendezvous = std::make_unique<braid::net::RendezvousService>(
        job.job_key, std::getenv("BRAID_SOCKET_IFNAME"), verbose(), [](const std::string &line) {
          braidrun::write_all(STDERR_FILENO, "braidrun: " + line + "\n");
        });
    job.rendezvous = rendezvous->addresses();
  }
  const braidrun::BindingPlan bindings = plan(options, placement);
  auto ranks = braidrun::launch_ranks(options, job, placement, inherited, bindings);
  return braidrun::supervise(std::move(ranks), std::move(signal_fd), guard);
}

void report(const std::string &message) {
  braidrun::write_all(STDERR_FILENO, "braidrun: " + message + "\n");
}

}  // namespace

int main(int argc, char **argv) {
  const auto command_line =
      braidrun::parse_command_line(std::span<const char *const>(argv + 1, argv + argc));
  switch (command_line.action) {
    case braidrun::Action::help:
      return braidrun::write_all(STDOUT_FILENO, braidrun::help_text()) ? 0 : 1;
    case braidrun::Action::version:
      return braidrun::write_all(STDOUT_FILENO, braidrun::version_line()) ? 0 : 1;
    case braidrun::Action::usage_error:
      report(command_line.error);
      braidrun::write_all(STDERR_FILENO, braidrun::usage_line());
      braidrun::write_all(STDERR_FILENO, "Try 'braidrun --help' for more information.\n");
      return braidrun::kUsageErrorExit;
    case braidrun::Action::run:
      break;
  }
  try {
    return run_job(command_line.options);
  } catch (const braidrun::SpawnError &error) {
    report(error.what());
    return error.exit_status();
  } catch (const std::exception &error) {
    report(error.what());
    return 1;
  }
}
