#include "machine.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace braid_bench {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::string cpu_model_from_cpuinfo(std::string_view cpuinfo) {
  for (std::string_view key : {"model name", "cpu model", "Model"}) {
    size_t pos = 0;
    while (pos < cpuinfo.size()) {
      size_t end = cpuinfo.find('\n', pos);
      if (end == std::string_view::npos) end = cpuinfo.size();
      std::string_view line = cpuinfo.substr(pos, end - pos);
      pos = end + 1;
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos || trim(line.substr(0, colon)) != key) continue;
      std::string_view value = trim(line.substr(colon + 1));
      if (!value.empty()) return std::string(value);
    }
  }
  return "unknown";
}

MachineInfo this_machine() {
  MachineInfo m;
  char host[256] = {0};
  m.hostname = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  m.nproc = n > 0 ? static_cast<int>(n) : 0;
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  m.cpu_model = cpu_model_from_cpuinfo(text.str());
  return m;
}

}  // namespace braid_bench
