// What every transport plugin needs from the ABI's conventions, header-only so each plugin keeps
// its own copy (plugins share no library): writing the one-line error braid shows the user,
// logging through braid's hook, and copying named counters out.
#pragma once

#include <braid/transport.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace braid::plugin {

// The error buffer and log hook from braid_transport_init_args_t.
struct Reporter {
  char *err = nullptr;
  size_t err_len = 0;
  void (*log)(int level, const char *msg) = nullptr;

  // Writes a printf-style message into the error buffer and returns `code`.
  int error(int code, const char *fmt, ...) __attribute__((format(printf, 3, 4))) {
    if (err != nullptr && err_len > 0) {
      va_list ap;
      va_start(ap, fmt);
      std::vsnprintf(err, err_len, fmt, ap);
      va_end(ap);
    }
    return code;
  }
  // Level 0 = warn, 1 = info, 2 = trace.
  void logf(int level, const char *fmt, ...) __attribute__((format(printf, 3, 4))) {
    if (log == nullptr) return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log(level, line);
  }
};

struct NamedCounter {
  const char *name;
  uint64_t value;
};

// The ABI's counters(): copies up to *n, sets *n to how many there are.
template <size_t N>
int copy_counters(const NamedCounter (&all)[N], braid_transport_counter_t *out, size_t *n) {
  for (size_t i = 0; i < N && i < *n; ++i) {
    std::snprintf(out[i].name, sizeof out[i].name, "%s", all[i].name);
    out[i].value = all[i].value;
  }
  *n = N;
  return BRAID_SUCCESS;
}

}  // namespace braid::plugin
