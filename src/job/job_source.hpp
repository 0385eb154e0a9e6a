// Where a process learns its place in a job. The sources, tried in this order:
//   1. braid's environment contract (BRAID_RANK, ...), as braidrun sets it or a user by hand;
//   2. PMIx, when a PMIx server started the process (Open MPI's mpirun, srun --mpi=pmix);
//   3. none: a 1-rank world, but only when nothing at all points to a larger job. A partial
//      braid environment, or a launcher that says there are more processes but offers no
//      PMIx, is an error: running them as N separate 1-rank worlds would give wrong answers.
#pragma once

#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "config/env_config.hpp"

namespace braid::detail {

class JobSource {
 public:
  virtual ~JobSource() = default;
  JobSource(const JobSource &) = delete;
  JobSource &operator=(const JobSource &) = delete;

  // Rank, size, local rank and size, transport, timeout and (braid contract only) addresses.
  const EnvConfig &config() const { return config_; }
  // For the log: the source and what it found, e.g. "PMIx (srun, namespace slurm.pmix.7.0,
  // OpenPMIx 4.2.2rc2)" or "braid environment (BRAID_RANK=1, BRAID_SIZE=4)".
  const std::string &name() const { return name_; }
  // Forms the bootstrap network, every wait bounded by config().timeout_s. Call once.
  virtual std::unique_ptr<Bootstrap> form_bootstrap() = 0;
  // Where the bootstrap found rank 0 ("10.0.0.5:41000"), known after form_bootstrap.
  const std::string &root_address() const { return root_address_; }

 protected:
  JobSource(EnvConfig config, std::string name)
      : config_(std::move(config)), name_(std::move(name)) {}
  EnvConfig config_;
  std::string name_;
  std::string root_address_;
};

// Tries the sources in order. Throws Failure(BRAID_ERR_BOOTSTRAP) naming the source that
// failed ("PMIx_Init failed: ...") or, when there is none but a larger job is evident, "no
// bootstrap source: ..." with the evidence; a malformed value (BRAID_TIMEOUT='abc') is
// BRAID_ERR_INVALID_ARGUMENT naming the variable.
std::unique_ptr<JobSource> find_job_source(const EnvLookup &env);

}  // namespace braid::detail
