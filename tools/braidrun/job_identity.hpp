// Values shared by every rank of one job: the bootstrap address rank 0 listens on and a random
// key that lets ranks reject connections from other jobs.
#pragma once

#include <string>

namespace braidrun {

struct JobIdentity {
  std::string bootstrap;  // "127.0.0.1:<port>"
  std::string job_key;    // 32 lowercase hex digits
};

JobIdentity make_job_identity();

}  // namespace braidrun
