// launch_probe: one rank of a job started by any launcher. It joins the job with braid_init,
// checks braid's rank and size against what the launcher itself says (BRAID_RANK/SIZE,
// OMPI_COMM_WORLD_RANK/SIZE or SLURM_PROCID/SLURM_STEP_NUM_TASKS), checks an allreduce, and
// prints one line naming the launcher's local rank and size, which the test scripts compare
// with the "job source: ..." line braid logs at BRAID_DEBUG=info (the C API does not expose the
// local rank). Exit 0 only if everything matched.
//
// --skip-init-rank K: the process whose launcher rank is K sleeps 2*BRAID_TIMEOUT and exits
// without joining, so the others' joining fails (used to provoke a PMIx_Fence failure).
#include <braid/braid.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

std::optional<long> env_number(const char *name) {
  const char *v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0') return std::nullopt;
  return n;
}

// Slurm's compressed tasks-per-node list, "2(x2),1" -> {2, 2, 1}.
std::vector<long> slurm_tasks_per_node(const char *text) {
  std::vector<long> out;
  while (text != nullptr && *text != '\0') {
    char *end = nullptr;
    const long tasks = std::strtol(text, &end, 10);
    if (end == text) break;
    long repeat = 1;
    if (std::strncmp(end, "(x", 2) == 0) {
      repeat = std::strtol(end + 2, &end, 10);
      if (*end == ')') ++end;
    }
    out.insert(out.end(), static_cast<size_t>(repeat), tasks);
    if (*end != ',') break;
    text = end + 1;
  }
  return out;
}

struct LauncherView {
  const char *name = "none";
  long rank = 0, size = 1, local_rank = 0, local_size = 1;
};

LauncherView launcher_view() {
  LauncherView v;
  if (auto r = env_number("BRAID_RANK")) {
    v = {"braidrun", *r, env_number("BRAID_SIZE").value_or(-1),
         env_number("BRAID_LOCAL_RANK").value_or(-1), env_number("BRAID_LOCAL_SIZE").value_or(-1)};
  } else if (auto r = env_number("OMPI_COMM_WORLD_RANK")) {
    // Before Slurm's: an mpirun inside an allocation passes the batch step's SLURM_* on.
    v = {"mpirun", *r, env_number("OMPI_COMM_WORLD_SIZE").value_or(-1),
         env_number("OMPI_COMM_WORLD_LOCAL_RANK").value_or(-1),
         env_number("OMPI_COMM_WORLD_LOCAL_SIZE").value_or(-1)};
  } else if (auto r = env_number("SLURM_PROCID")) {
    v.name = "srun";
    v.rank = *r;
    v.size = env_number("SLURM_STEP_NUM_TASKS").value_or(-1);
    v.local_rank = env_number("SLURM_LOCALID").value_or(-1);
    const auto per_node = slurm_tasks_per_node(std::getenv("SLURM_STEP_TASKS_PER_NODE"));
    const long node = env_number("SLURM_NODEID").value_or(-1);
    v.local_size = node >= 0 && node < static_cast<long>(per_node.size()) ? per_node[node] : -1;
  }
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  const LauncherView launcher = launcher_view();
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--skip-init-rank") == 0 && std::atol(argv[i + 1]) == launcher.rank) {
      const double timeout =
          std::getenv("BRAID_TIMEOUT") ? std::atof(std::getenv("BRAID_TIMEOUT")) : 10.0;
      std::this_thread::sleep_for(std::chrono::duration<double>(2 * timeout));
      std::printf("launch_probe: rank %ld never joined, on purpose\n", launcher.rank);
      return 0;
    }
  }

  braid_comm_t world = nullptr;
  if (braid_init(&argc, &argv, &world) != BRAID_SUCCESS) {
    std::fprintf(stderr, "launch_probe: braid_init failed: %s\n", braid_last_error());
    return 1;
  }
  const int rank = braid_comm_rank(world), size = braid_comm_size(world);
  long sum = rank;
  int rc = 0;
  if (braid_allreduce(&sum, &sum, 1, BRAID_INT64, BRAID_SUM, world) != BRAID_SUCCESS) {
    std::fprintf(stderr, "launch_probe: rank %d: allreduce failed: %s\n", rank, braid_last_error());
    rc = 1;
  } else if (sum != static_cast<long>(size) * (size - 1) / 2) {
    std::fprintf(stderr, "launch_probe: rank %d: sum of ranks is %ld, expected %ld\n", rank, sum,
                 static_cast<long>(size) * (size - 1) / 2);
    rc = 1;
  }
  if (rank != launcher.rank || size != launcher.size) {
    std::fprintf(stderr, "launch_probe: braid says rank %d of %d, %s says rank %ld of %ld\n", rank,
                 size, launcher.name, launcher.rank, launcher.size);
    rc = 1;
  }
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  // The scripts look for braid's "[rank R] ... rank R of N, local rank L of M" with these L, M.
  std::printf(
      "launch_probe: rank %d of %d on %s: %s says rank %ld of %ld, local rank %ld of %ld%s\n", rank,
      size, host, launcher.name, launcher.rank, launcher.size, launcher.local_rank,
      launcher.local_size, rc == 0 ? "" : " MISMATCH");
  std::fflush(stdout);
  if (braid_finalize() != BRAID_SUCCESS) rc = 1;
  return rc;
}
