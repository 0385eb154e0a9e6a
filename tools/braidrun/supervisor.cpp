#include "supervisor.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>

#include "output.hpp"
#include "termination.hpp"

namespace braidrun {
namespace {

using Clock = std::chrono::steady_clock;

// Grace periods between the polite signal and SIGKILL.
constexpr auto kGraceAfterFailure = std::chrono::seconds(3);
constexpr auto kGraceAfterForwarding = std::chrono::seconds(5);
// After the last rank exited, how long to keep reading pipes that a leftover grandchild may
// hold open; data the ranks wrote themselves is already in the pipe by then.
constexpr auto kOutputDrainGrace = std::chrono::seconds(1);
// Ranks named on the follow-up line before it switches to "and N more".
constexpr std::size_t kListedCollateral = 8;
// Bounds one drain of a dead rank's pipe in case a leftover grandchild keeps writing into it.
constexpr int kMaxReadsPerDrain = 64;

void report(const std::string &line) {
  write_all(STDERR_FILENO, "braidrun: " + line + "\n");
}

const char *signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return "SIGTERM";
  }
}

struct Stream {
  UniqueFd fd;
  LineForwarder forwarder;
};

struct RankState {
  int rank;
  pid_t pid;
  std::string where;
  bool running = true;
  Stream out;
  Stream err;
};

class Supervisor {
 public:
  Supervisor(std::vector<RankProcess> ranks, UniqueFd signal_fd);
  int run();

 private:
  struct Failure {
    int rank;
    int wait_status;
  };

  void handle_signals();
  void reap();
  void on_exit(RankState &rank, int wait_status);
  // Sends `signal` to every running rank and SIGKILL to those left after the grace period;
  // `received`: what braidrun got, when it is another signal (SIGHUP ends the job by SIGTERM).
  void forward(int signal, int received = 0);
  // Sends `signal` to every rank running here (not through a launch agent); the job goes on.
  void relay(int signal);
  void signal_running(int signal);
  void arm_kill_deadline(Clock::duration grace);
  void kill_remaining();
  void pump(Stream &stream, bool until_empty);
  void close_stream(Stream &stream);
  int poll_timeout_ms(std::optional<Clock::time_point> drain_deadline) const;
  bool any_stream_open() const;
  void report_collateral() const;

  std::vector<RankState> ranks_;
  std::unordered_map<pid_t, std::size_t> index_of_pid_;
  UniqueFd signal_fd_;
  std::size_t running_;
  std::optional<Failure> first_failure_;
  std::vector<Failure> collateral_;  // abnormal exits after the first failure
  std::optional<Clock::time_point> kill_deadline_;
  bool killed_ = false;
};

Supervisor::Supervisor(std::vector<RankProcess> ranks, UniqueFd signal_fd)
    : signal_fd_(std::move(signal_fd)), running_(ranks.size()) {
  ranks_.reserve(ranks.size());
  for (RankProcess &process : ranks) {
    index_of_pid_.emplace(process.pid, ranks_.size());
    ranks_.push_back(
        RankState{process.rank, process.pid, process.where, true,
                  Stream{std::move(process.out), LineForwarder(process.rank, STDOUT_FILENO)},
                  Stream{std::move(process.err), LineForwarder(process.rank, STDERR_FILENO)}});
  }
}

int Supervisor::run() {
  std::optional<Clock::time_point> drain_deadline;
  std::vector<pollfd> fds;
  std::vector<Stream *> streams;  // streams[i] belongs to fds[i + 1]
  for (;;) {
    if (running_ == 0) {
      if (!drain_deadline) drain_deadline = Clock::now() + kOutputDrainGrace;
      if (!any_stream_open() || Clock::now() >= *drain_deadline) break;
    }

    fds.assign(1, pollfd{signal_fd_.get(), POLLIN, 0});
    streams.clear();
    for (RankState &rank : ranks_) {
      for (Stream *stream : {&rank.out, &rank.err}) {
        if (!stream->fd) continue;
        fds.push_back(pollfd{stream->fd.get(), POLLIN, 0});
        streams.push_back(stream);
      }
    }

    if (poll(fds.data(), fds.size(), poll_timeout_ms(drain_deadline)) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    // Signals first: a rank that died has its last output drained before its failure is
    // reported, and the pump below then simply finds its pipes closed.
    if (fds[0].revents != 0) handle_signals();
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (fds[i + 1].revents != 0 && streams[i]->fd) pump(*streams[i], false);
    }
    if (kill_deadline_ && !killed_ && running_ > 0 && Clock::now() >= *kill_deadline_) {
      kill_remaining();
    }
  }

  for (RankState &rank : ranks_) {
    close_stream(rank.out);
    close_stream(rank.err);
  }
  report_collateral();
  return first_failure_ ? exit_status_of(first_failure_->wait_status) : 0;
}

void Supervisor::handle_signals() {
  signalfd_siginfo info;
  while (read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int signal = static_cast<int>(info.ssi_signo);
    if (signal == SIGINT || signal == SIGTERM || signal == SIGQUIT) {
      forward(signal);
    } else if (signal == SIGHUP) {
      // As mpirun: the session that started the job is gone; the ranks are asked to end.
      forward(SIGTERM, signal);
    } else if (signal == SIGUSR1 || signal == SIGUSR2) {
      // Passed on, as mpirun does; the job goes on (a checkpoint request, say).
      relay(signal);
    }
  }
  // SIGCHLDs coalesce, so reap whatever has ended regardless of how many arrived.
  reap();
}

void Supervisor::reap() {
  for (;;) {
    int status;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;  // 0: nothing else has ended; -1 (ECHILD): no children left
    const auto found = index_of_pid_.find(pid);
    if (found != index_of_pid_.end()) on_exit(ranks_[found->second], status);
  }
}

void Supervisor::on_exit(RankState &rank, int wait_status) {
  rank.running = false;
  --running_;
  if (is_success(wait_status)) return;
  if (first_failure_) {
    collateral_.push_back({rank.rank, wait_status});
    return;
  }
  // The rank's last words (often the reason it failed) should come before the verdict.
  if (rank.out.fd) pump(rank.out, true);
  if (rank.err.fd) pump(rank.err, true);
  first_failure_ = Failure{rank.rank, wait_status};
  // For a remote rank the pid is the launch agent's, whose exit is the rank's.
  report("rank " + std::to_string(rank.rank) + " (pid " + std::to_string(rank.pid) +
         (rank.where.empty() ? "" : ", " + rank.where) + ") " + describe(wait_status));
  signal_running(SIGTERM);
  arm_kill_deadline(kGraceAfterFailure);
}

void Supervisor::forward(int signal, int received) {
  if (running_ == 0) return;
  if (received == 0 || received == signal)
    report(std::string("received ") + signal_name(signal) + ", forwarding it to " +
           std::to_string(running_) + (running_ == 1 ? " rank" : " ranks"));
  else
    report(std::string("received ") + signal_name(received) + ", sending " + signal_name(signal) +
           " to " + std::to_string(running_) + (running_ == 1 ? " rank" : " ranks"));
  signal_running(signal);
  arm_kill_deadline(kGraceAfterForwarding);
}

void Supervisor::relay(int signal) {
  // Only to ranks running here: a launch agent such as ssh dies of SIGUSR1 itself, and its
  // rank would count as failed (the job is meant to go on).
  int here = 0;
  for (const RankState &rank : ranks_) here += rank.running && rank.where.empty() ? 1 : 0;
  if (here == 0) return;
  report(std::string("received ") + signal_name(signal) + ", passing it on to " +
         std::to_string(here) + (here == 1 ? " rank" : " ranks") +
         (static_cast<std::size_t>(here) < running_ ? " running here" : ""));
  for (const RankState &rank : ranks_)
    if (rank.running && rank.where.empty() && kill(-rank.pid, signal) != 0) kill(rank.pid, signal);
}

void Supervisor::signal_running(int signal) {
  for (const RankState &rank : ranks_) {
    if (!rank.running) continue;
    // An unreaped rank keeps its group id reserved, so -pid cannot hit an unrelated group.
    // Fall back to the pid alone in case the group is not set up (setpgid failed).
    if (kill(-rank.pid, signal) != 0) kill(rank.pid, signal);
  }
}

// The earliest deadline wins: a later event never buys the job more time.
void Supervisor::arm_kill_deadline(Clock::duration grace) {
  const Clock::time_point deadline = Clock::now() + grace;
  if (!kill_deadline_ || deadline < *kill_deadline_) kill_deadline_ = deadline;
}

void Supervisor::kill_remaining() {
  report(std::to_string(running_) + (running_ == 1 ? " rank" : " ranks") +
         " still running after the grace period, sending SIGKILL");
  signal_running(SIGKILL);
  killed_ = true;
}

void Supervisor::pump(Stream &stream, bool until_empty) {
  char buffer[64 * 1024];
  for (int reads = 0; !until_empty || reads < kMaxReadsPerDrain; ++reads) {
    const ssize_t n = read(stream.fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      stream.forwarder.consume({buffer, static_cast<std::size_t>(n)});
      // Like a shell pipeline: once nobody reads braidrun's output, stop reading the rank's,
      // so its next write fails with SIGPIPE/EPIPE instead of it running on unheard.
      if (stream.forwarder.broken()) {
        close_stream(stream);
        return;
      }
      if (!until_empty) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close_stream(stream);  // EOF, or a read error that will not go away
    return;
  }
}

void Supervisor::close_stream(Stream &stream) {
  if (!stream.fd) return;
  stream.forwarder.finish();
  stream.fd.reset();
}

int Supervisor::poll_timeout_ms(std::optional<Clock::time_point> drain_deadline) const {
  std::optional<Clock::time_point> wake;
  if (kill_deadline_ && !killed_ && running_ > 0) wake = kill_deadline_;
  if (drain_deadline && (!wake || *drain_deadline < *wake)) wake = drain_deadline;
  if (!wake) return -1;
  const auto remaining = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(remaining.count(), 0, 60'000));
}

bool Supervisor::any_stream_open() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const RankState &rank) {
    return static_cast<bool>(rank.out.fd) || static_cast<bool>(rank.err.fd);
  });
}

void Supervisor::report_collateral() const {
  if (collateral_.empty()) return;
  std::string line = "also ended abnormally during shutdown:";
  for (std::size_t i = 0; i < collateral_.size() && i < kListedCollateral; ++i) {
    line += (i == 0 ? " rank " : ", rank ") + std::to_string(collateral_[i].rank) + " (" +
            describe_briefly(collateral_[i].wait_status) + ")";
  }
  if (collateral_.size() > kListedCollateral) {
    line += " and " + std::to_string(collateral_.size() - kListedCollateral) + " more";
  }
  report(line);
}

}  // namespace

int supervise(std::vector<RankProcess> ranks, UniqueFd signal_fd) {
  return Supervisor(std::move(ranks), std::move(signal_fd)).run();
}

}  // namespace braidrun
