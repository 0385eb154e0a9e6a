#include "job_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <vector>

namespace braidrun {
namespace {

struct Record {
  int op;  // kWatch or kForget
  pid_t group;
};
constexpr int kWatch = 1;
constexpr int kForget = 0;

[[noreturn]] void guard(int fd) {
  // Its own session: the terminal's signals to braidrun's group (Ctrl-C, a hangup) are not
  // for the guard, and nothing it inherited may hold braidrun's output pipes open.
  setsid();
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
  }
  if (fd != 3 && dup2(fd, 3) == 3) fd = 3;
  close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  std::vector<pid_t> groups;
  Record r;
  for (;;) {
    const ssize_t n = read(fd, &r, sizeof r);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof r)) break;  // EOF: braidrun is gone, or done
    if (r.op == kWatch)
      groups.push_back(r.group);
    else
      std::erase(groups, r.group);
  }
  for (const pid_t g : groups) kill(-g, SIGKILL);
  _exit(0);
}

}  // namespace

JobGuard::JobGuard() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2 (job guard)");
  braid::net::UniqueFd read_end(fds[0]);
  pipe_.reset(fds[1]);
  pid_ = fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork (job guard)");
  if (pid_ == 0) {
    pipe_.reset();
    guard(read_end.release());
  }
}

JobGuard::~JobGuard() {
  pipe_.reset();
  if (pid_ < 0) return;
  int status;
  // The guard exits at once on EOF.
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void JobGuard::watch(pid_t group) {
  send(kWatch, group);
}

void JobGuard::forget(pid_t group) {
  send(kForget, group);
}

void JobGuard::send(int op, pid_t group) {
  const Record r{op, group};
  // A record is far below PIPE_BUF, so it is written whole or not at all. A guard that died
  // (someone killed it) only costs the protection it gave: braidrun ignores SIGPIPE.
  ssize_t n;
  do {
    n = write(pipe_.get(), &r, sizeof r);
  } while (n < 0 && errno == EINTR);
}

}  // namespace braidrun
