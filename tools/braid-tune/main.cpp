// braid-tune: measures what the node path costs on this machine (src/tuning/machine_probe.hpp)
// and writes it as JSON for BRAID_TUNING_FILE. These machines change from day to day; measure
// on the day, next to the figures it explains (bench/compare runs it).
//   braid-tune [--cores A,B] [--out FILE]
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstring>
#include <string>

#include "config/env_config.hpp"
#include "error.hpp"
#include "tuning/machine_probe.hpp"

namespace {

void usage(FILE *to) {
  std::fputs(
      "usage: braid-tune [--cores A,B] [--out FILE] [--help]\n"
      "  Measures, in about a second: the round trip of one cache line between cores A and B,\n"
      "  one core's memcpy bandwidth (4 MiB and 64 MiB), the node path's window copy (256 KiB\n"
      "  windows written on A and copied out on B), a float32 sum on one core, and\n"
      "  process_vm_readv (CMA) from another process. Prints them; with --out, writes them as\n"
      "  JSON for BRAID_TUNING_FILE (braid-info shows the file's figures).\n"
      "  --cores A,B  the two cores (default: the first two this process may run on)\n",
      to);
}

// Writes `text` to `path` whole or not at all: into a temporary file beside it, flushed to
// disk, then renamed over it, so a job that starts while braid-tune runs again reads the old
// profile or the new one, never an empty or half-written file; a full disk is an error.
// Anything but a regular file (a pipe, /dev/stdout) is written in place; a symbolic link is
// replaced by the file, as an editor's save does.
void write_whole(const std::string &path, const std::string &text) {
  struct stat st {};
  const bool in_place = stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = in_place ? path : path + ".tmp." + std::to_string(getpid());
  auto refuse = [&](const char *what) {
    const int err = errno;
    if (!in_place) unlink(tmp.c_str());
    braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "--out ", path, ": ", what, ": ",
                        std::strerror(err));
  };
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) refuse("cannot be created");
  for (size_t at = 0; at < text.size();) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;  // nothing written and no error: the device is full
      close(fd);
      refuse("cannot be written");
    }
    at += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file that cannot be synced (/dev/...)
    close(fd);
    refuse("cannot be flushed");
  }
  if (close(fd) != 0) refuse("cannot be closed");
  if (!in_place && rename(tmp.c_str(), path.c_str()) != 0) refuse("cannot be put in place");
}

// The first two cores in this process's affinity mask.
bool first_two_cores(int *a, int *b) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &set)) (found++ == 0 ? *a : *b) = c;
  return found == 2;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace braid::detail;
  int a = 0, b = 1;
  bool cores_given = false;
  std::string out;
  try {
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
        usage(stdout);
        return 0;
      } else if (!std::strcmp(argv[i], "--cores") && i + 1 < argc) {
        const std::string v = argv[++i];
        const size_t comma = v.find(',');
        if (comma == std::string::npos)
          fail(BRAID_ERR_INVALID_ARGUMENT, "--cores ", v, ": expected A,B");
        a = static_cast<int>(parse_integer(v.substr(0, comma), "--cores", 0, CPU_SETSIZE - 1));
        b = static_cast<int>(parse_integer(v.substr(comma + 1), "--cores", 0, CPU_SETSIZE - 1));
        cores_given = true;
      } else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
        out = argv[++i];
      } else {
        std::fprintf(stderr, "braid-tune: unknown option '%s'\n", argv[i]);
        usage(stderr);
        return 2;
      }
    }
    if (!cores_given && !first_two_cores(&a, &b))
      fail(BRAID_ERR_INVALID_ARGUMENT, "this process may run on one core only: the node path ",
           "between two cores cannot be measured (give --cores A,B)");
    const MachineProfile p = probe_machine(a, b);
    std::fputs(describe(p).c_str(), stdout);
    if (!out.empty()) {
      write_whole(out, to_json(p));
      std::printf("written to %s (use it with BRAID_TUNING_FILE=%s)\n", out.c_str(), out.c_str());
    }
  } catch (const Failure &f) {
    std::fprintf(stderr, "braid-tune: %s\n", f.message().c_str());
    return 2;
  }
  return 0;
}
