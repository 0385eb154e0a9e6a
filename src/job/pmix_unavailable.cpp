// Built instead of pmix_job.cpp when libpmix was not found at build time: find_job_source then
// reports that this libbraid cannot join a PMIx job instead of guessing.
#include "error.hpp"
#include "job/sources.hpp"

namespace braid::detail {

bool pmix_built_in() {
  return false;
}

std::unique_ptr<JobSource> make_pmix_job(const EnvConfig &, std::string launcher,
                                         std::optional<std::string>) {
  fail(BRAID_ERR_BOOTSTRAP, "started by ", launcher,
       " through PMIx, but this libbraid was built without PMIx (libpmix-dev was not found at "
       "build time)");
}

}  // namespace braid::detail
