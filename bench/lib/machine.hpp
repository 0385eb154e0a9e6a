// Where a run happened, for the JSON "machine" object.
#pragma once

#include <string>
#include <string_view>

namespace braid_bench {

struct MachineInfo {
  std::string hostname;
  int nproc = 0;  // online processors
  std::string cpu_model;
};

// The first "model name" (x86) or "Model"/"cpu model" (other architectures) value in the
// text of /proc/cpuinfo; "unknown" when there is none.
std::string cpu_model_from_cpuinfo(std::string_view cpuinfo);

MachineInfo this_machine();

}  // namespace braid_bench
