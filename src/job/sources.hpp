// The job sources behind find_job_source (job_source.hpp), one file each.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "job/job_source.hpp"

namespace braid::detail {

// braid's contract, as parsed by parse_env_config (or a 1-rank world when config says so).
// ifname is BRAID_SOCKET_IFNAME, used when rank 0 registers with braidrun's rendezvous.
std::unique_ptr<JobSource> make_env_job(EnvConfig config, std::string name,
                                        std::optional<std::string> ifname);

// True when this libbraid was built with PMIx (libpmix-dev found at build time).
bool pmix_built_in();
// PMIx_Init and the job's shape; the bootstrap address is exchanged in form_bootstrap.
// `base` supplies transport, timeout and BRAID_SOCKET_IFNAME; `launcher` names who started
// the process ("srun", "mpirun") for messages.
std::unique_ptr<JobSource> make_pmix_job(const EnvConfig &base, std::string launcher,
                                         std::optional<std::string> ifname);

}  // namespace braid::detail
