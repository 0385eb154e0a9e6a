// Where an oversubscribed rank runs after a long wait. Ranks that share CPUs without being bound
// (braidrun's default with more ranks than cores, mpirun --bind-to none) are placed by the
// kernel when they wake, and sleepers woken at once by one rank land near the waker: on 2
// cores, three ranks on one and one on the other. The load balancer leaves that for 50-100 ms
// and more (every task on the crowded core ran within the last half millisecond, so it is
// "cache hot" and stays), and meanwhile every small collective takes twice as long (4 ranks,
// 8 B alltoall: 23-30 us a call instead of 11.5). So the rank's main thread goes back to a CPU
// of its own after a long wait and after it wakes ranks that waited long (a rank that never
// waited would otherwise stay where the kernel put it), the CPUs of the shared mask dealt out
// in turn by node discovery; the mask is left as it was, and the kernel may move the rank
// again.
#pragma once

#include <cstdint>

namespace braid::detail {

// Makes the calling thread the one that returns to `cpu` (-1: none; node discovery's choice).
void set_home_cpu(int cpu);
// The calling thread's home CPU, -1 for none.
int home_cpu();
// Moves the thread that set_home_cpu named back to its CPU, if it runs elsewhere; a no-op on
// other threads and without a home CPU. Cheap when nothing moves (one vDSO getcpu).
void return_home();
// How often return_home moved the thread (a counter of braid_comm_counters).
uint64_t home_cpu_moves();

// Moves the calling thread to `cpu` when it runs elsewhere and its affinity mask holds `cpu`
// and at least one other CPU; the mask is restored at once. Returns the CPU the thread ran on
// while it was held to `cpu` alone (that is, `cpu`), or -1 when it did not move (already there,
// cpu < 0, a mask without it, or the kernel refused).
int move_to_cpu(int cpu);

}  // namespace braid::detail
