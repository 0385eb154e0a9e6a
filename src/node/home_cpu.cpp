#include "node/home_cpu.hpp"

#include <sched.h>

#include <atomic>

namespace braid::detail {
namespace {

// Only the thread that set it: a rank's other threads (communicators driven from threads of
// their own) are left to the kernel rather than crowded onto one CPU.
thread_local int t_home_cpu = -1;
std::atomic<uint64_t> g_moves{0};

}  // namespace

void set_home_cpu(int cpu) {
  t_home_cpu = cpu;
}

int home_cpu() {
  return t_home_cpu;
}

void return_home() {
  if (t_home_cpu >= 0 && move_to_cpu(t_home_cpu) >= 0)
    g_moves.fetch_add(1, std::memory_order_relaxed);
}

uint64_t home_cpu_moves() {
  return g_moves.load(std::memory_order_relaxed);
}

int move_to_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() == cpu) return -1;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return -1;
  if (!CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return -1;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  // The kernel migrates the thread before sched_setaffinity returns.
  if (sched_setaffinity(0, sizeof one, &one) != 0) return -1;
  const int ran_on = sched_getcpu();
  if (sched_setaffinity(0, sizeof mask, &mask) != 0) {
    // The mask no longer fits (a cpuset changed meanwhile): every CPU, which the kernel cuts
    // down to those allowed, rather than leave the thread held to one.
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
  }
  return ran_on;
}

}  // namespace braid::detail
