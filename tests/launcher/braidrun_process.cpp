#include "braidrun_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

extern char **environ;

namespace braid_launcher_test {

using namespace std::chrono_literals;

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/braidrun-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

BraidrunProcess::BraidrunProcess(const std::vector<std::string> &args, const EnvChanges &env,
                                 const std::string &stdin_path) {
  std::vector<std::string> argv_storage{BRAIDRUN_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());

  std::vector<std::string> env_storage;
  for (char **entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (env.count(text.substr(0, text.find('='))) == 0) env_storage.push_back(text);
  }
  for (const auto &[name, value] : env) {
    if (!value.empty()) env_storage.push_back(name + "=" + value);
  }

  auto pointers = [](std::vector<std::string> &strings) {
    std::vector<char *> result;
    for (std::string &s : strings) result.push_back(s.data());
    result.push_back(nullptr);
    return result;
  };
  std::vector<char *> argv = pointers(argv_storage);
  std::vector<char *> envp = pointers(env_storage);
  const std::string out_path = capture_ / "stdout";
  const std::string err_path = capture_ / "stderr";

  std::string slave;
  if (stdin_path == kTerminal) {
    terminal_ = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (terminal_ < 0 || grantpt(terminal_) != 0 || unlockpt(terminal_) != 0)
      throw std::runtime_error("no pseudo-terminal");
    slave = ptsname(terminal_);
  }

  start_ = std::chrono::steady_clock::now();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    // A session leader's first terminal opened becomes its controlling terminal, with its
    // process group in the foreground.
    if (!slave.empty()) setsid();
    const int null = open(slave.empty() ? stdin_path.c_str() : slave.c_str(), O_RDWR);
    if (out < 0 || err < 0 || null < 0) _exit(200);
    dup2(null, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(201);
  }
}

BraidrunProcess::~BraidrunProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
  }
  if (terminal_ >= 0) close(terminal_);
}

RunResult BraidrunProcess::wait(std::chrono::milliseconds limit) {
  RunResult result;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = wait4(pid_, &status, WNOHANG, &usage);
    if (done == pid_) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    if (std::chrono::steady_clock::now() - start_ > limit) {
      ADD_FAILURE() << "braidrun did not finish within " << limit.count() << " ms";
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  pid_ = -1;
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start_);
  result.cpu = std::chrono::milliseconds(
      (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 +
      (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000);
  result.exited = WIFEXITED(status);
  result.exit_code = result.exited ? WEXITSTATUS(status) : -1;
  result.out = read_file(capture_ / "stdout");
  result.err = read_file(capture_ / "stderr");
  return result;
}

RunResult run_braidrun(const std::vector<std::string> &args, const EnvChanges &env,
                       std::chrono::milliseconds limit) {
  return BraidrunProcess(args, env).wait(limit);
}

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<std::string> split_lines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool wait_for_files(const std::vector<std::string> &paths, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool all = true;
    for (const std::string &path : paths) all = all && std::filesystem::exists(path);
    if (all) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
}

namespace {

// Live (non-zombie) members of a process group, from /proc. kill(-group, 0) is not enough: an
// orphaned zombie still counts there until init reaps it, which some container inits never do.
int live_members(pid_t group) {
  int count = 0;
  for (const auto &entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(entry.path().string() + "/stat");
    const auto end_of_comm = stat.rfind(')');
    if (end_of_comm == std::string::npos) continue;  // the process ended while we looked
    std::istringstream fields(stat.substr(end_of_comm + 1));
    char state = 0;
    pid_t parent = 0, pgrp = 0;
    fields >> state >> parent >> pgrp;
    if (pgrp == group && state != 'Z') ++count;
  }
  return count;
}

}  // namespace

std::vector<std::string> rank_files(const TempDir &dir, const std::string &stem, int ranks) {
  std::vector<std::string> paths;
  for (int rank = 0; rank < ranks; ++rank) paths.push_back(dir / (stem + std::to_string(rank)));
  return paths;
}

pid_t read_pid(const std::string &path) {
  // The shell creates the file before it writes the line: wait for the whole line (5 s at most).
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  std::string text = read_file(path);
  while ((text.empty() || text.back() != '\n') && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    text = read_file(path);
  }
  return std::stoi(text);
}

bool process_group_gone(pid_t group, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (live_members(group) == 0) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace braid_launcher_test
