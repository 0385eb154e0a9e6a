#include "job/job_source.hpp"

#include <charconv>

#include "error.hpp"
#include "job/sources.hpp"

namespace braid::detail {
namespace {

constexpr const char *kNoSource =
    "no bootstrap source: not started by braidrun, mpirun or srun, and BRAID_RANK is unset";

// Variables with which launchers say how many processes they started. A process that sees one
// above 1 but has no source to find the others must not carry on as a 1-rank world.
struct SizeHint {
  const char *variable;
  const char *meaning;
};
constexpr SizeHint kSizeHints[] = {
    {"SLURM_STEP_NUM_TASKS", "srun started it without PMIx; use srun --mpi=pmix"},
    {"OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun started it, but its PMIx server is not reachable"},
    {"PMI_SIZE",
     "a PMI-1/PMI-2 launcher started it (MPICH's mpiexec, srun --mpi=pmi2); braid needs PMIx: "
     "use srun --mpi=pmix or Open MPI's mpirun"},
};

std::optional<std::string> larger_job_evidence(const EnvLookup &env) {
  for (const SizeHint &hint : kSizeHints) {
    const std::optional<std::string> value = env(hint.variable);
    if (!value) continue;
    long long n = 0;
    auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
    if (ec == std::errc() && end == value->data() + value->size() && n > 1)
      return cat(hint.variable, "=", *value, ": ", hint.meaning);
  }
  return std::nullopt;
}

// Who ran the PMIx server, for messages; the protocol is the same either way. Open MPI's
// first: an mpirun inside a Slurm allocation passes the allocation's SLURM_* on to its ranks.
std::string pmix_launcher(const EnvLookup &env) {
  if (env("OMPI_COMMAND") || env("OMPI_COMM_WORLD_SIZE")) return "mpirun";
  if (env("SLURM_STEP_ID") || env("SLURM_JOB_ID")) return "srun";
  return cat("the launcher that set PMIX_NAMESPACE=", env("PMIX_NAMESPACE").value_or(""));
}

}  // namespace

std::unique_ptr<JobSource> find_job_source(const EnvLookup &env) {
  std::optional<std::string> ifname = env("BRAID_SOCKET_IFNAME");

  // 1. braid's own contract: set on purpose, so it wins over whatever launched the process.
  if (env("BRAID_RANK")) {
    EnvConfig config = parse_env_config(env);
    std::string name =
        cat("the braid environment (BRAID_RANK=", config.rank, ", BRAID_SIZE=", config.size, ")");
    return make_env_job(std::move(config), std::move(name), std::move(ifname));
  }

  // Without BRAID_RANK, the rest of the contract (transport, timeout) still applies, but a
  // partial one (BRAID_SIZE or an address without a rank) is a mistake whatever else is set.
  const bool under_pmix = env("PMIX_NAMESPACE") && env("PMIX_RANK");
  EnvConfig base;
  try {
    base = parse_env_config(env);
  } catch (const Failure &f) {
    // A malformed value (BRAID_TIMEOUT='abc') is that mistake, whoever launched the process;
    // only a partial job description (BRAID_ERR_BOOTSTRAP) is about the source.
    if (f.code() != BRAID_ERR_BOOTSTRAP) throw;
    if (under_pmix)
      fail(f.code(), f.message(), " (started by ", pmix_launcher(env),
           " through PMIx: unset them and PMIx describes the job)");
    fail(f.code(), kNoSource, " (", f.message(), ")");
  }

  // 2. PMIx.
  const std::optional<std::string> evidence = larger_job_evidence(env);
  if (under_pmix && (pmix_built_in() || evidence))
    return make_pmix_job(base, pmix_launcher(env), std::move(ifname));

  // 3. Nothing: a 1-rank world, unless a launcher said there are more processes.
  if (evidence) fail(BRAID_ERR_BOOTSTRAP, kNoSource, ", yet ", *evidence);
  std::string name =
      under_pmix ? cat("none (started by ", pmix_launcher(env),
                       " as its only process, and this libbraid has no PMIx), a 1-rank world")
                 : "none (not started by braidrun, mpirun or srun, and BRAID_RANK is unset), a "
                   "1-rank world";
  return make_env_job(std::move(base), std::move(name), std::move(ifname));
}

}  // namespace braid::detail
