#include "process_state.hpp"

#include <sys/signalfd.h>

#include <cerrno>
#include <system_error>

namespace braidrun {
namespace {

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  // A dropped terminal or session (SIGHUP), SIGQUIT, and the user signals a batch system
  // sends before a time limit (Slurm's --signal=USR1@...): by default they killed braidrun at
  // once, leaving its ranks to the parent-death SIGKILL, their handlers never run.
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGQUIT);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  // Ctrl-Z reaches only braidrun (the ranks have sessions of their own); it stops them itself.
  sigaddset(&set, SIGTSTP);
  sigaddset(&set, SIGCHLD);
  return set;
}

struct sigaction disposition(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  return action;
}

}  // namespace

InheritedState prepare_launcher_process() {
  InheritedState state{};
  const sigset_t supervised = supervised_signals();
  if (sigprocmask(SIG_BLOCK, &supervised, &state.signal_mask) != 0) {
    throw std::system_error(errno, std::generic_category(), "sigprocmask");
  }
  const struct sigaction ignore = disposition(SIG_IGN);
  if (sigaction(SIGPIPE, &ignore, &state.sigpipe_action) != 0) {
    throw std::system_error(errno, std::generic_category(), "sigaction(SIGPIPE)");
  }
  // An inherited SIG_IGN for SIGCHLD would make the kernel reap ranks itself and hide their exit
  // status from waitpid().
  const struct sigaction default_action = disposition(SIG_DFL);
  if (sigaction(SIGCHLD, &default_action, &state.sigchld_action) != 0) {
    throw std::system_error(errno, std::generic_category(), "sigaction(SIGCHLD)");
  }
  if (getrlimit(RLIMIT_NOFILE, &state.open_files) != 0) {
    throw std::system_error(errno, std::generic_category(), "getrlimit(RLIMIT_NOFILE)");
  }
  // Best effort: if it fails, a launch that runs out of descriptors reports EMFILE clearly.
  rlimit raised = state.open_files;
  raised.rlim_cur = raised.rlim_max;
  setrlimit(RLIMIT_NOFILE, &raised);
  return state;
}

UniqueFd open_signal_fd() {
  const sigset_t supervised = supervised_signals();
  UniqueFd fd(signalfd(-1, &supervised, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd) throw std::system_error(errno, std::generic_category(), "signalfd");
  return fd;
}

void restore_inherited_state(const InheritedState &state) noexcept {
  sigaction(SIGPIPE, &state.sigpipe_action, nullptr);
  sigaction(SIGCHLD, &state.sigchld_action, nullptr);
  setrlimit(RLIMIT_NOFILE, &state.open_files);
  sigprocmask(SIG_SETMASK, &state.signal_mask, nullptr);
}

}  // namespace braidrun
