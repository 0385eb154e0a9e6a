// Values shared by every rank of one job: where the ranks find rank 0 and a random key that
// lets ranks reject connections from other jobs.
#pragma once

#include <string>

namespace braidrun {

struct JobIdentity {
  std::string bootstrap;   // "127.0.0.1:<port>", for jobs on this machine only
  std::string rendezvous;  // instead, for jobs across hosts: braidrun's rendezvous service
  std::string job_key;     // 32 lowercase hex digits
};

// A job on this machine: rank 0 will listen on 127.0.0.1 at a port free right now.
JobIdentity make_job_identity();
// A job across hosts: only the key; the caller sets rendezvous.
JobIdentity make_job_key();

}  // namespace braidrun
