// Rank-prefixed logging controlled by BRAID_DEBUG=warn|info|trace (default: warn).
#pragma once

#include "error.hpp"

namespace braid::detail {

enum class LogLevel { warn = 0, info = 1, trace = 2 };

// Parses BRAID_DEBUG once; later calls reuse the result.
LogLevel log_threshold();
// Sets the rank shown in the "[rank N]" prefix (-1 before the rank is known).
void log_set_rank(int rank);
void log_write(LogLevel level, const std::string &message);

template <typename... Args>
void log(LogLevel level, Args &&...args) {
  if (static_cast<int>(level) <= static_cast<int>(log_threshold()))
    log_write(level, cat(std::forward<Args>(args)...));
}

}  // namespace braid::detail
