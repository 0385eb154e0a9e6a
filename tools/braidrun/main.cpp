// braidrun: starts the N ranks of a braid job on this machine and supervises them. The command
// line and environment contract are documented in help.cpp (braidrun --help).
#include <unistd.h>

#include <exception>
#include <span>
#include <string>

#include "help.hpp"
#include "job_identity.hpp"
#include "launch.hpp"
#include "options.hpp"
#include "output.hpp"
#include "process_state.hpp"
#include "supervisor.hpp"

namespace {

int run_job(const braidrun::Options &options) {
  // Signals are blocked before the first fork so none that arrives during the launch is lost:
  // it waits in the signalfd until supervision starts.
  const braidrun::InheritedState inherited = braidrun::prepare_launcher_process();
  braidrun::UniqueFd signal_fd = braidrun::open_signal_fd();
  const braidrun::JobIdentity job = braidrun::make_job_identity();
  auto ranks = braidrun::launch_ranks(options, job, inherited);
  return braidrun::supervise(std::move(ranks), std::move(signal_fd));
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
