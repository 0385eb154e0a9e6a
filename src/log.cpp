#include "log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace braid::detail {
namespace {
std::atomic<int> g_rank{-1};

LogLevel parse_threshold() {
  const char *value = std::getenv("BRAID_DEBUG");
  if (value == nullptr || *value == '\0' || std::strcmp(value, "warn") == 0) return LogLevel::warn;
  if (std::strcmp(value, "info") == 0) return LogLevel::info;
  if (std::strcmp(value, "trace") == 0) return LogLevel::trace;
  std::fprintf(stderr, "braid: warning: BRAID_DEBUG=%s is not one of warn|info|trace; using warn\n",
               value);
  return LogLevel::warn;
}
}  // namespace

LogLevel log_threshold() {
  static const LogLevel threshold = parse_threshold();
  return threshold;
}

void log_set_rank(int rank) {
  g_rank.store(rank);
}

void log_write(LogLevel level, const std::string &message) {
  static const char *const names[] = {"warn", "info", "trace"};
  // One fprintf per line so lines from several threads or ranks do not interleave.
  int rank = g_rank.load();
  if (rank >= 0)
    std::fprintf(stderr, "[rank %d] braid %s: %s\n", rank, names[static_cast<int>(level)],
                 message.c_str());
  else
    std::fprintf(stderr, "braid %s: %s\n", names[static_cast<int>(level)], message.c_str());
}

}  // namespace braid::detail
