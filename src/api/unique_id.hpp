// braid_get_unique_id and braid_comm_init_rank: a group formed from 128 bytes the caller hands
// to its processes by its own means (an MPI broadcast, a file, a framework's store), without
// braidrun or PMIx. The id carries the addresses of a rendezvous service the creating process
// runs (net/rendezvous_service.hpp), a fresh job key every bootstrap connection must present,
// and a checksum; the group's rank 0 registers where it listens there, the others look it up,
// exactly as ranks of a braidrun job across hosts do (job/rendezvous_board.hpp).
#pragma once

#include <braid/braid.h>

#include <memory>
#include <string>
#include <vector>

#include "api/process.hpp"
#include "config/env_config.hpp"

namespace braid::detail {

struct UniqueIdContent {
  std::string job_key;
  std::vector<Endpoint> service;
};

// Starts a rendezvous service (kept until the process exits) and describes it.
braid_unique_id_t make_unique_id();
// Throws Failure(BRAID_ERR_BOOTSTRAP) for bytes that are not an id this build made (magic,
// version, checksum, malformed addresses).
UniqueIdContent decode_unique_id(const braid_unique_id_t &id);
// Forms the group: a process context of its own (bootstrap, transport, control plane).
std::unique_ptr<Process> join_unique_id(const braid_unique_id_t &id, int nranks, int rank);

}  // namespace braid::detail
