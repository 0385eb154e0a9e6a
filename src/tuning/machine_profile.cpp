#include "tuning/machine_profile.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "error.hpp"

namespace braid::detail {
namespace {

// The value of "key" in a flat JSON object: a number or a string without escapes.
std::optional<std::string> field(const std::string &text, const char *key) {
  const std::regex re(std::string("\"") + key + "\"\\s*:\\s*(\"([^\"]*)\"|[-+0-9.eE]+)");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[2].matched ? m[2].str() : m[1].str();
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string to_json(const MachineProfile &p) {
  return cat("{\"host\": \"", p.host, "\", \"measured_at\": \"", p.measured_at,
             "\", \"core_a\": ", p.core_a, ", \"core_b\": ", p.core_b,
             ", \"handoff_rtt_ns\": ", number(p.handoff_rtt_ns),
             ", \"memcpy_gbps\": ", number(p.memcpy_gbps),
             ", \"memcpy_large_gbps\": ", number(p.memcpy_large_gbps),
             ", \"window_copy_gbps\": ", number(p.window_copy_gbps),
             ", \"reduce_gbps\": ", number(p.reduce_gbps), ", \"cma_gbps\": ", number(p.cma_gbps),
             "}\n");
}

std::optional<MachineProfile> profile_from_json(const std::string &text, std::string *why) {
  MachineProfile p;
  struct Num {
    const char *key;
    double *to;
    bool may_be_zero;  // CMA: 0 where the kernel refuses it; the others are always measured
  };
  const Num nums[] = {{"handoff_rtt_ns", &p.handoff_rtt_ns, false},
                      {"memcpy_gbps", &p.memcpy_gbps, false},
                      {"memcpy_large_gbps", &p.memcpy_large_gbps, false},
                      {"window_copy_gbps", &p.window_copy_gbps, false},
                      {"reduce_gbps", &p.reduce_gbps, false},
                      {"cma_gbps", &p.cma_gbps, true}};
  for (const Num &n : nums) {
    const auto v = field(text, n.key);
    char *end = nullptr;
    const double d = v ? std::strtod(v->c_str(), &end) : 0;
    // A zero or infinite figure would make the model's predictions zero or infinite.
    if (!v || end == v->c_str() || *end != '\0' || !std::isfinite(d) || d < 0 ||
        (d == 0 && !n.may_be_zero)) {
      *why = cat("no valid \"", n.key, "\" (a finite number ", n.may_be_zero ? ">= 0" : "> 0", ")");
      return std::nullopt;
    }
    *n.to = d;
  }
  if (auto v = field(text, "core_a")) p.core_a = std::atoi(v->c_str());
  if (auto v = field(text, "core_b")) p.core_b = std::atoi(v->c_str());
  if (auto v = field(text, "host")) p.host = *v;
  if (auto v = field(text, "measured_at")) p.measured_at = *v;
  return p;
}

std::optional<MachineProfile> profile_from_environment(std::string *why) {
  why->clear();
  const char *path = std::getenv("BRAID_TUNING_FILE");
  if (path == nullptr || *path == '\0') return std::nullopt;
  std::ifstream in(path);
  if (!in) {
    *why = cat("BRAID_TUNING_FILE=", path, ": cannot be read");
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string what;
  auto p = profile_from_json(text.str(), &what);
  if (!p) *why = cat("BRAID_TUNING_FILE=", path, ": ", what, " (write it with braid-tune)");
  return p;
}

std::string describe(const MachineProfile &p) {
  std::ostringstream out;
  char line[160];
  out << "machine profile (" << (p.host.empty() ? "?" : p.host) << ", measured "
      << (p.measured_at.empty() ? "?" : p.measured_at) << "):\n";
  std::snprintf(line, sizeof line, "  core %d <-> core %d cache-line round trip: %.0f ns\n",
                p.core_a, p.core_b, p.handoff_rtt_ns);
  out << line;
  std::snprintf(line, sizeof line, "  memcpy, one core: %.1f GB/s at 4 MiB, %.1f GB/s at 64 MiB\n",
                p.memcpy_gbps, p.memcpy_large_gbps);
  out << line;
  std::snprintf(line, sizeof line,
                "  256 KiB windows written on core %d, copied out on core %d: %.1f GB/s\n",
                p.core_a, p.core_b, p.window_copy_gbps);
  out << line;
  std::snprintf(line, sizeof line, "  float32 sum of two vectors, one core: %.1f GB/s (output)\n",
                p.reduce_gbps);
  out << line;
  std::snprintf(line, sizeof line, "  process_vm_readv (CMA) from another process: %.1f GB/s\n",
                p.cma_gbps);
  out << line;
  return out.str();
}

}  // namespace braid::detail
