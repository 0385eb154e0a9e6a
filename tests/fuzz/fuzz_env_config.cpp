// The environment contract: the input is NAME=VALUE lines (the variables braid reads); the
// parser must either accept them or throw a Failure naming the variable, never crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "config/env_config.hpp"
#include "error.hpp"

using namespace braid::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::map<std::string, std::string> vars;
  std::string text(reinterpret_cast<const char *>(data), size);
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    size_t eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
    at = end + 1;
  }
  EnvLookup env = [&](const char *name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  try {
    EnvConfig c = parse_env_config(env);
    if (c.rank < 0 || c.rank >= c.size) __builtin_trap();
    if (c.local_rank < 0 || c.local_rank >= c.local_size) __builtin_trap();
    if (!(c.timeout_s > 0)) __builtin_trap();
  } catch (const Failure &) {
  }
  return 0;
}
