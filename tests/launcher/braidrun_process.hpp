// Test harness: runs the real, freshly built braidrun as a child process with its stdout and
// stderr captured in files, so tests assert on exactly what a user would see. No mocks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace braid_launcher_test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }
  std::string operator/(const std::string &name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct RunResult {
  bool exited = false;  // false: braidrun itself was killed by a signal (or timed out)
  int exit_code = -1;   // valid when exited
  std::string out;      // everything braidrun (and inheriting ranks) wrote to stdout
  std::string err;      // same for stderr
  std::chrono::milliseconds elapsed{0};
  std::chrono::milliseconds cpu{0};  // braidrun's own CPU time (user + system), not the ranks'
};

// Environment changes for braidrun on top of the test's own environment. An empty value
// removes the variable.
using EnvChanges = std::map<std::string, std::string>;

// As stdin_path: braidrun runs in a session of its own on a new pseudo-terminal, which is its
// standard input and controlling terminal, with braidrun in the foreground (as a shell's
// foreground job); the test holds the terminal's other side until braidrun ends.
inline const std::string kTerminal = "<terminal>";

class BraidrunProcess {
 public:
  // `stdin_path`: braidrun's standard input (or kTerminal).
  explicit BraidrunProcess(const std::vector<std::string> &args, const EnvChanges &env = {},
                           const std::string &stdin_path = "/dev/null");
  ~BraidrunProcess();  // SIGKILLs braidrun if the test did not wait for it
  BraidrunProcess(const BraidrunProcess &) = delete;
  BraidrunProcess &operator=(const BraidrunProcess &) = delete;

  pid_t pid() const { return pid_; }
  // Waits for braidrun to end; after `limit` it is SIGKILLed and the test fails.
  RunResult wait(std::chrono::milliseconds limit = std::chrono::seconds(20));

 private:
  TempDir capture_;
  pid_t pid_ = -1;
  int terminal_ = -1;  // the pseudo-terminal's master side, with kTerminal
  std::chrono::steady_clock::time_point start_;
};

RunResult run_braidrun(const std::vector<std::string> &args, const EnvChanges &env = {},
                       std::chrono::milliseconds limit = std::chrono::seconds(20));

std::string read_file(const std::string &path);
std::vector<std::string> split_lines(const std::string &text);
// Polls (every 10 ms) until every path exists or `limit` passes; true if they all appeared.
bool wait_for_files(const std::vector<std::string> &paths, std::chrono::milliseconds limit);
// dir/stem0, dir/stem1, ...: one file per rank.
std::vector<std::string> rank_files(const TempDir &dir, const std::string &stem, int ranks);
// A pid a rank wrote to a file (`echo $$ > file`).
pid_t read_pid(const std::string &path);
// True once no live process is left in the process group (each rank leads its own group).
bool process_group_gone(pid_t group, std::chrono::milliseconds limit);

}  // namespace braid_launcher_test
