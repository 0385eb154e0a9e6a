// BRAID_VERBS_RECV_QUEUES and the other BRAID_VERBS_* variables: any text is either refused
// with a message or gives classes inside the documented limits, in increasing size, that
// print back to text which parses to the same classes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "options.hpp"
#include "recv_spec.hpp"

using namespace braid::verbs;

namespace {
std::string g_value;
const char *lookup(const char *name) {
  return std::string(name) == "BRAID_VERBS_DEVICE" || std::string(name) == "BRAID_VERBS_EAGER_LIMIT"
             ? g_value.c_str()
             : nullptr;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<QueueSpec> spec;
  std::string error;
  if (parse_recv_queues(text, &spec, &error)) {
    if (spec.empty() || spec.size() > kMaxQueueClasses) __builtin_trap();
    for (size_t i = 0; i < spec.size(); ++i) {
      if (spec[i].bytes < kMinQueueBytes || spec[i].bytes > kMaxQueueBytes) __builtin_trap();
      if (spec[i].count < 1 || spec[i].count > kMaxQueueCount) __builtin_trap();
      if (i > 0 && spec[i].bytes <= spec[i - 1].bytes) __builtin_trap();
    }
    std::vector<QueueSpec> again;
    if (!parse_recv_queues(format_recv_queues(spec), &again, &error)) __builtin_trap();
    if (again.size() != spec.size()) __builtin_trap();
  } else if (error.empty()) {
    __builtin_trap();
  }
  g_value = text;
  Options options;
  if (!parse_options(lookup, &options, &error) && error.empty()) __builtin_trap();
  return 0;
}
