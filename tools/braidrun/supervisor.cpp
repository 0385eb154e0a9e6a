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

#include "job_guard.hpp"
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
// After SIGKILL, how long to wait for the job's processes to go before giving up on them: a
// process in uninterruptible sleep (a hung file system) can outlive SIGKILL indefinitely.
constexpr auto kGiveUpAfterKill = std::chrono::seconds(10);
// How often to look whether the processes a rank left behind in its group have gone; those
// reparented to braidrun (a child subreaper) wake it anyway, others (an inner subreaper) may not.
constexpr auto kLeftoverProbe = std::chrono::milliseconds(100);

void report(const std::string &line) {
  write_all(STDERR_FILENO, "braidrun: " + line + "\n");
}

// "a, b, c" of the first kListedCollateral items, then "and N more".
std::string listed(const std::vector<std::string> &items) {
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < kListedCollateral; ++i)
    text += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > kListedCollateral)
    text += " and " + std::to_string(items.size() - kListedCollateral) + " more";
  return text;
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
    case SIGKILL:
      return "SIGKILL";
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
  // Processes may be left in the rank's process group after the rank itself (the group's
  // leader) exited: a wrapper script's program, say. Cleared once the group is gone. While
  // any member lives the kernel does not reuse the group's id, so signalling -pid stays safe.
  bool group_alive = true;
};

class Supervisor {
 public:
  Supervisor(std::vector<RankProcess> ranks, UniqueFd signal_fd, JobGuard &guard);
  int run();

 private:
  struct Failure {
    int rank;
    int wait_status;
  };

  void handle_signals();
  void reap();
  // Stops the ranks here (SIGSTOP) and braidrun itself, as a shell's job control would have
  // stopped them all had they been in its group; continues them when braidrun is continued.
  void suspend();
  // Looks which groups of exited ranks still have members; true if any has.
  bool probe_groups();
  // Ends what exited ranks left running in their groups once every rank has exited.
  void end_leftovers();
  // Reports what still lives kGiveUpAfterKill after SIGKILL; braidrun then stops waiting.
  void give_up();
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
  // job_alive: a rank, or what one left in its group, still runs (the deadlines apply);
  // leftovers: what one left is looked at again within kLeftoverProbe.
  int poll_timeout_ms(std::optional<Clock::time_point> drain_deadline, bool job_alive,
                      bool leftovers) const;
  bool any_stream_open() const;
  void report_collateral() const;

  // Marks the rank's group gone: never signalled again, here or by the guard.
  void group_gone(RankState &rank);

  std::vector<RankState> ranks_;
  JobGuard &guard_;
  std::unordered_map<pid_t, std::size_t> index_of_pid_;
  UniqueFd signal_fd_;
  std::size_t running_;
  std::optional<Failure> first_failure_;
  std::vector<Failure> collateral_;  // abnormal exits after the first failure
  std::optional<Clock::time_point> kill_deadline_;
  bool killed_ = false;
  Clock::time_point killed_at_;
  bool leftovers_ended_ = false;
  bool gave_up_ = false;
};

Supervisor::Supervisor(std::vector<RankProcess> ranks, UniqueFd signal_fd, JobGuard &guard)
    : guard_(guard), signal_fd_(std::move(signal_fd)), running_(ranks.size()) {
  ranks_.reserve(ranks.size());
  for (RankProcess &process : ranks) {
    guard_.watch(process.pid);
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
    // Looked at every pass (and every kLeftoverProbe while any is left), not only at the end:
    // a group whose last member something else reaped must be known gone before its id can be
    // taken by an unrelated group that a later signal would reach.
    const bool leftovers = probe_groups();
    if (running_ == 0) {
      if (leftovers && !leftovers_ended_) end_leftovers();
      if (!drain_deadline) drain_deadline = Clock::now() + kOutputDrainGrace;
      if (!leftovers && (!any_stream_open() || Clock::now() >= *drain_deadline)) break;
    }
    const bool job_alive = running_ > 0 || leftovers;
    if (killed_ && job_alive && Clock::now() >= killed_at_ + kGiveUpAfterKill) {
      give_up();
      break;
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

    if (poll(fds.data(), fds.size(), poll_timeout_ms(drain_deadline, job_alive, leftovers)) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    // Signals first: a rank that died has its last output drained before its failure is
    // reported, and the pump below then simply finds its pipes closed.
    if (fds[0].revents != 0) handle_signals();
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (fds[i + 1].revents != 0 && streams[i]->fd) pump(*streams[i], false);
    }
    if (kill_deadline_ && !killed_ && job_alive && Clock::now() >= *kill_deadline_) {
      kill_remaining();
    }
  }

  for (RankState &rank : ranks_) {
    close_stream(rank.out);
    close_stream(rank.err);
  }
  report_collateral();
  if (first_failure_) return exit_status_of(first_failure_->wait_status);
  return gave_up_ ? 1 : 0;
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
    } else if (signal == SIGTSTP) {
      suspend();
    }
  }
  // SIGCHLDs coalesce, so reap whatever has ended regardless of how many arrived.
  reap();
}

void Supervisor::reap() {
  // Everything that ended since the last look, then the verdicts: waitpid returns zombies in
  // the order they were forked, not died, and a rank killed by a signal (the crash) usually
  // takes the others down with it, which then exit with an error of their own. So among the
  // ranks found dead together, one killed by a signal is reported as the job's failure.
  std::vector<std::pair<std::size_t, int>> ended;
  for (;;) {
    int status;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;  // 0: nothing else has ended; -1 (ECHILD): no children left
    if (pid == guard_.pid()) guard_.reaped();  // someone killed it
    // Others are processes a rank left behind, reparented to braidrun (the subreaper). A rank
    // leaves the map when it is reaped: its pid may be reused by such a process.
    const auto found = index_of_pid_.find(pid);
    if (found == index_of_pid_.end()) continue;
    ended.emplace_back(found->second, status);
    index_of_pid_.erase(found);
  }
  std::stable_partition(ended.begin(), ended.end(),
                        [](const auto &e) { return WIFSIGNALED(e.second) != 0; });
  for (const auto &[index, status] : ended) on_exit(ranks_[index], status);
}

void Supervisor::suspend() {
  // Only as job control: in the terminal's foreground. A SIGTSTP sent some other way (the
  // kernel itself drops the terminal's to an orphaned group, under nohup or setsid) would stop
  // the job with nobody to continue it.
  if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) != getpgrp()) return;
  std::vector<pid_t> stopped;
  for (const RankState &rank : ranks_)
    if ((rank.running || rank.group_alive) && rank.where.empty() && kill(-rank.pid, SIGSTOP) == 0)
      stopped.push_back(rank.pid);
  kill(getpid(), SIGSTOP);  // returns once braidrun is continued (fg, bg, kill -CONT)
  for (const pid_t pid : stopped) kill(-pid, SIGCONT);
}

void Supervisor::group_gone(RankState &rank) {
  rank.group_alive = false;
  guard_.forget(rank.pid);
}

bool Supervisor::probe_groups() {
  bool any = false;
  for (RankState &rank : ranks_) {
    if (rank.running || !rank.group_alive) continue;
    // EPERM: what is left (a setuid helper) is not braidrun's to signal or wait for.
    if (kill(-rank.pid, 0) != 0 && (errno == ESRCH || errno == EPERM))
      group_gone(rank);
    else
      any = true;
  }
  return any;
}

void Supervisor::end_leftovers() {
  leftovers_ended_ = true;
  std::vector<std::string> ranks;
  for (const RankState &rank : ranks_)
    if (rank.group_alive) ranks.push_back(std::to_string(rank.rank));
  // As srun ends what a job step left behind: nobody supervises such processes any longer.
  report("every rank has exited, but processes they started are still running (rank" +
         std::string(ranks.size() == 1 ? " " : "s ") + listed(ranks) + "); sending them SIGTERM");
  signal_running(SIGTERM);
  arm_kill_deadline(kGraceAfterFailure);
}

void Supervisor::give_up() {
  gave_up_ = true;
  for (const RankState &rank : ranks_) {
    if (!rank.running && !rank.group_alive) continue;
    report("rank " + std::to_string(rank.rank) + " (pid " + std::to_string(rank.pid) + ") " +
           (rank.running ? "is" : "left processes that are") + " still there " +
           std::to_string(kGiveUpAfterKill.count()) +
           " s after SIGKILL (stuck in the kernel, e.g. in uninterruptible I/O); braidrun "
           "stops waiting for " +
           (rank.running ? "it" : "them"));
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
  if (running_ == 0) {
    // Only what the ranks left behind runs: it gets the signal, and the grace applies.
    if (std::none_of(ranks_.begin(), ranks_.end(),
                     [](const RankState &r) { return r.group_alive; }))
      return;
    report(std::string("received ") + signal_name(received == 0 ? signal : received) +
           ", sending " + signal_name(signal) + " to what the ranks left running");
    signal_running(signal);
    arm_kill_deadline(kGraceAfterForwarding);
    return;
  }
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
  for (RankState &rank : ranks_) {
    if (rank.running) {
      // An unreaped rank keeps its group id reserved, so -pid cannot hit an unrelated group.
      // Fall back to the pid alone in case the group is not set up (setsid failed).
      if (kill(-rank.pid, signal) != 0) kill(rank.pid, signal);
    } else if (rank.group_alive && kill(-rank.pid, signal) != 0 && errno == ESRCH) {
      group_gone(rank);  // its leader exited earlier, and now the rest has gone too
      continue;
    }
    // A stopped process keeps a SIGTERM pending until it is continued.
    if (signal != SIGKILL && signal != SIGCONT && (rank.running || rank.group_alive))
      kill(-rank.pid, SIGCONT);
  }
}

// The earliest deadline wins: a later event never buys the job more time.
void Supervisor::arm_kill_deadline(Clock::duration grace) {
  const Clock::time_point deadline = Clock::now() + grace;
  if (!kill_deadline_ || deadline < *kill_deadline_) kill_deadline_ = deadline;
}

void Supervisor::kill_remaining() {
  if (running_ > 0)
    report(std::to_string(running_) + (running_ == 1 ? " rank" : " ranks") +
           " still running after the grace period, sending SIGKILL");
  else
    report("processes the ranks started still running after the grace period, sending SIGKILL");
  signal_running(SIGKILL);
  killed_ = true;
  killed_at_ = Clock::now();
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

int Supervisor::poll_timeout_ms(std::optional<Clock::time_point> drain_deadline, bool job_alive,
                                bool leftovers) const {
  const Clock::time_point now = Clock::now();
  std::optional<Clock::time_point> wake;
  if (job_alive && kill_deadline_ && !killed_) wake = kill_deadline_;
  if (job_alive && killed_) wake = killed_at_ + kGiveUpAfterKill;
  // A drain deadline that passed (while leftovers remain) must not make poll return at once.
  if (drain_deadline && *drain_deadline > now && (!wake || *drain_deadline < *wake))
    wake = drain_deadline;
  if (leftovers && (!wake || now + kLeftoverProbe < *wake)) wake = now + kLeftoverProbe;
  if (!wake) return -1;
  const auto remaining = std::chrono::ceil<std::chrono::milliseconds>(*wake - now);
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(remaining.count(), 0, 60'000));
}

bool Supervisor::any_stream_open() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const RankState &rank) {
    return static_cast<bool>(rank.out.fd) || static_cast<bool>(rank.err.fd);
  });
}

void Supervisor::report_collateral() const {
  if (collateral_.empty()) return;
  std::vector<std::string> ranks;
  for (const Failure &f : collateral_)
    ranks.push_back("rank " + std::to_string(f.rank) + " (" + describe_briefly(f.wait_status) +
                    ")");
  report("also ended abnormally during shutdown: " + listed(ranks));
}

}  // namespace

int supervise(std::vector<RankProcess> ranks, UniqueFd signal_fd, JobGuard &guard) {
  return Supervisor(std::move(ranks), std::move(signal_fd), guard).run();
}

}  // namespace braidrun
