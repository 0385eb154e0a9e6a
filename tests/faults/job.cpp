#include "job.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "common/free_port.hpp"

namespace faults {
namespace {

void parse_line(const std::string &line, RankOutput *out, long long *kill_ns) {
  auto field = [&](const char *key) -> std::string {
    size_t at = line.find(key);
    if (at == std::string::npos) return "";
    at += std::strlen(key);
    return line.substr(at, line.find(' ', at) - at);
  };
  Report *r = nullptr;
  if (line.find("RESULT code=") != std::string::npos) r = &out->result;
  if (line.find("LATER code=") != std::string::npos) r = &out->later;
  if (line.find("START t=") != std::string::npos) {
    out->start_ns = std::stoll(field("START t="));
    return;
  }
  if (line.find("KILL t=") != std::string::npos) {
    out->kill_ns = std::stoll(field("KILL t="));
    *kill_ns = out->kill_ns;
    return;
  }
  if (!r) return;
  r->present = true;
  r->code = std::stoi(field("code="));
  const std::string t = field(r == &out->later ? "dt=" : "t=");
  r->t_ns = t.empty() ? 0 : std::stoll(t);
  size_t m = line.find("msg=");
  r->msg = m == std::string::npos ? "" : line.substr(m + 4);
}

// Reads every fd to EOF (or until the deadline), appending to texts[i].
void drain(std::vector<int> fds, std::vector<std::string> *texts, double deadline_s,
           const std::vector<int> &pids) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadline_s);
  std::vector<int> open(fds.size(), 1);
  for (;;) {
    std::vector<pollfd> p;
    std::vector<size_t> idx;
    for (size_t i = 0; i < fds.size(); ++i)
      if (open[i]) {
        p.push_back({fds[i], POLLIN, 0});
        idx.push_back(i);
      }
    if (p.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      for (int pid : pids) kill(pid, SIGKILL);
      for (int pid : pids) kill(-pid, SIGKILL);
      break;
    }
    if (poll(p.data(), p.size(), static_cast<int>(std::min<long long>(left, 1000))) < 0) continue;
    for (size_t k = 0; k < p.size(); ++k) {
      if (!p[k].revents) continue;
      char buf[4096];
      ssize_t n = read(p[k].fd, buf, sizeof buf);
      if (n <= 0) {
        open[idx[k]] = 0;
        continue;
      }
      (*texts)[idx[k]].append(buf, static_cast<size_t>(n));
    }
  }
  for (int fd : fds) close(fd);
}

std::string program() {
  return FAULT_RANK_PATH;
}

void wait_exit(int pid, RankOutput *out) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return;
  if (WIFEXITED(status)) out->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out->signal = WTERMSIG(status);
}

}  // namespace

Process spawn(const std::vector<std::string> &argv, const Env &env) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (const auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  return {pid, out[0], err[0]};
}

int free_port() {
  return braid::test::free_port();
}

JobOutput run_by_hand(int size, const Env &env, double deadline_s) {
  const std::string boot = "127.0.0.1:" + std::to_string(free_port());
  std::vector<Process> procs;
  for (int r = 0; r < size; ++r) {
    Env e = env;
    e["BRAID_RANK"] = std::to_string(r);
    e["BRAID_SIZE"] = std::to_string(size);
    e.emplace("BRAID_BOOTSTRAP", boot);
    e.emplace("BRAID_JOB_KEY", "fault-test-key");
    procs.push_back(spawn({program()}, e));
  }
  std::vector<int> fds, pids;
  for (const Process &p : procs) {
    fds.push_back(p.out_fd);
    pids.push_back(p.pid);
  }
  for (const Process &p : procs) fds.push_back(p.err_fd);
  std::vector<std::string> texts(fds.size());
  drain(fds, &texts, deadline_s, pids);
  JobOutput job;
  job.ranks.resize(size);
  for (int r = 0; r < size; ++r) {
    std::istringstream lines(texts[r]);
    for (std::string line; std::getline(lines, line);)
      parse_line(line, &job.ranks[r], &job.kill_ns);
    job.err += texts[size + r];
    wait_exit(procs[r].pid, &job.ranks[r]);
  }
  return job;
}

JobOutput run_under_braidrun(int size, const Env &env, double deadline_s) {
  Process p = spawn({BRAIDRUN_PATH, "-n", std::to_string(size), "--tag-output", program()}, env);
  std::vector<std::string> texts(2);
  drain({p.out_fd, p.err_fd}, &texts, deadline_s, {p.pid});
  JobOutput job;
  job.ranks.resize(size);
  std::istringstream lines(texts[0]);
  for (std::string line; std::getline(lines, line);) {
    // --tag-output: "[r] text"
    if (line.size() < 3 || line[0] != '[') continue;
    const int r = std::atoi(line.c_str() + 1);
    if (r < 0 || r >= size) continue;
    parse_line(line, &job.ranks[r], &job.kill_ns);
  }
  job.err = texts[1];
  RankOutput launcher;
  wait_exit(p.pid, &launcher);
  job.launcher_exit = launcher.exit_code;
  return job;
}

}  // namespace faults
