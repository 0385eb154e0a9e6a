#include "spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace braidrun {
namespace {

// What the child sends back when it cannot get as far as the program.
struct ChildFailure {
  enum Stage : int { exec, parent_death_signal, redirect_output, redirect_input, bind } stage;
  int error;
};

[[noreturn]] void throw_errno(const char *what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Both ends close-on-exec so no other rank inherits them; the child moves its write end onto
// fd 1 or 2, which clears the flag there.
void make_pipe(UniqueFd &read_end, UniqueFd &write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
}

// Only braidrun's side is non-blocking: the rank's stdout must stay an ordinary blocking pipe.
void make_output_pipe(UniqueFd &read_end, UniqueFd &write_end) {
  make_pipe(read_end, write_end);
  const int flags = fcntl(read_end.get(), F_GETFL);
  if (flags < 0 || fcntl(read_end.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    throw_errno("fcntl(O_NONBLOCK)");
  }
}

std::vector<char *> c_strings(const std::vector<std::string> &strings) {
  std::vector<char *> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string &s : strings) pointers.push_back(const_cast<char *>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// dup2 is a no-op when both descriptors are equal and would leave close-on-exec set; that
// happens when braidrun was started with fd 1 or 2 closed and pipe2 reused the number.
bool move_fd(int fd, int target) {
  if (fd != target) return dup2(fd, target) == target;
  const int flags = fcntl(fd, F_GETFD);
  return flags >= 0 && fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) == 0;
}

[[noreturn]] void child_fail(int report_fd, ChildFailure::Stage stage, int error) {
  const ChildFailure failure{stage, error};
  [[maybe_unused]] const ssize_t ignored = write(report_fd, &failure, sizeof failure);
  _exit(127);
}

// Runs between fork and exec, so it only makes async-signal-safe calls.
[[noreturn]] void run_child(const SpawnRequest &request, pid_t launcher, int out_fd, int err_fd,
                            int in_fd, int report_fd, char *const *argv, char *const *envp) {
  // Own session, and so its own process group: braidrun signals the whole group, reaching
  // anything the rank started, and a terminal's Ctrl-C reaches only braidrun, which forwards
  // it exactly once. A session rather than a group alone because a background group that
  // touches braidrun's terminal is stopped (SIGTTIN), silently, for ever; with no controlling
  // terminal, rank 0 reads its standard input like any file and opening /dev/tty fails
  // (ENXIO), so an ssh launch agent that would prompt for a password or host key fails.
  setsid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    child_fail(report_fd, ChildFailure::parent_death_signal, errno);
  }
  // braidrun may have died before prctl took effect; then no signal would ever come.
  if (getppid() != launcher) _exit(127);
  if (request.capture_output &&
      (!move_fd(out_fd, STDOUT_FILENO) || !move_fd(err_fd, STDERR_FILENO))) {
    child_fail(report_fd, ChildFailure::redirect_output, errno);
  }
  if (in_fd >= 0 && !move_fd(in_fd, STDIN_FILENO)) {
    child_fail(report_fd, ChildFailure::redirect_input, errno);
  }
  if (request.affinity != nullptr &&
      sched_setaffinity(0, sizeof(cpu_set_t), request.affinity) != 0) {
    child_fail(report_fd, ChildFailure::bind, errno);
  }
  restore_inherited_state(*request.inherited);
  execvpe(argv[0], argv, envp);
  child_fail(report_fd, ChildFailure::exec, errno);
}

SpawnError spawn_error(const SpawnRequest &request, const ChildFailure &failure) {
  const std::string reason = std::strerror(failure.error);
  const std::string &program = request.argv->front();
  switch (failure.stage) {
    case ChildFailure::exec:
      return SpawnError("cannot execute '" + program + "': " + reason,
                        failure.error == ENOENT ? 127 : 126);
    case ChildFailure::parent_death_signal:
      return SpawnError("cannot start rank " + std::to_string(request.rank) +
                            ": prctl(PR_SET_PDEATHSIG): " + reason,
                        1);
    case ChildFailure::redirect_output:
      return SpawnError(
          "cannot start rank " + std::to_string(request.rank) + ": redirecting output: " + reason,
          1);
    case ChildFailure::bind:
      return SpawnError("cannot start rank " + std::to_string(request.rank) +
                            ": binding it to its CPUs (sched_setaffinity): " + reason,
                        1);
    case ChildFailure::redirect_input:
      return SpawnError(
          "cannot start rank " + std::to_string(request.rank) + ": redirecting input: " + reason,
          1);
  }
  return SpawnError("cannot start rank " + std::to_string(request.rank), 1);
}

}  // namespace

RankProcess spawn_rank(const SpawnRequest &request) {
  // Everything that allocates happens before fork.
  const std::vector<char *> argv = c_strings(*request.argv);
  const std::vector<char *> envp = c_strings(*request.environment);
  UniqueFd out_read, out_write, err_read, err_write, report_read, report_write;
  if (request.capture_output) {
    make_output_pipe(out_read, out_write);
    make_output_pipe(err_read, err_write);
  }
  make_pipe(report_read, report_write);
  UniqueFd null_input;
  if (request.null_stdin) {
    null_input.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!null_input) throw_errno("open /dev/null");
  }

  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    run_child(request, launcher, out_write.get(), err_write.get(), null_input.get(),
              report_write.get(), argv.data(), envp.data());
  }

  out_write.reset();
  err_write.reset();
  report_write.reset();
  // No setpgid from this side (it would make the child a group leader, and setsid then
  // fails): the read below returns only once the child has exec'd, so its session and group
  // exist before braidrun can signal them.

  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report_read.get(), &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof failure)) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw spawn_error(request, failure);
  }
  // n == 0: exec closed the pipe, the program is running.
  return RankProcess{request.rank, pid, "", std::move(out_read), std::move(err_read)};
}

}  // namespace braidrun
