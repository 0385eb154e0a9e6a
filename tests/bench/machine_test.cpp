// The "machine" object: the CPU model from /proc/cpuinfo text on several architectures.
#include <gtest/gtest.h>

#include "machine.hpp"

namespace braid_bench {
namespace {

TEST(Machine, CpuModelFromX86Cpuinfo) {
  const char *text =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
      "model\t\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\nstepping\t: 1\n\n"
      "processor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n";
  EXPECT_EQ(cpu_model_from_cpuinfo(text), "AMD EPYC 7763 64-Core Processor");
}

TEST(Machine, CpuModelOnOtherArchitectures) {
  EXPECT_EQ(cpu_model_from_cpuinfo("processor : 0\ncpu model : POWER9 (raw)\n"), "POWER9 (raw)");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 108.00\n\nModel\t: Raspberry Pi 4"),
            "Raspberry Pi 4");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nCPU part\t: 0xd0c\n"), "unknown");
  EXPECT_EQ(cpu_model_from_cpuinfo(""), "unknown");
  EXPECT_EQ(cpu_model_from_cpuinfo("model name\t:\nmodel name : Second\r\n"), "Second");
}

TEST(Machine, ThisMachine) {
  const MachineInfo m = this_machine();
  EXPECT_FALSE(m.hostname.empty());
  EXPECT_GT(m.nproc, 0);
  EXPECT_FALSE(m.cpu_model.empty());
}

}  // namespace
}  // namespace braid_bench
