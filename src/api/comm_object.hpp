// The objects behind the C handles: braid_comm_s (a world plus its collectives engine) and
// braid_request_s (one non-blocking call). Validation happens here, before anything is sent,
// so bad input fails at once on the calling rank and leaves the communicator usable.
#pragma once

#include <braid/braid.h>

#include <cstdint>
#include <memory>
#include <string>

#include "comm/world.hpp"
#include "control/control_plane.hpp"
#include "control/control_watch.hpp"
#include "engine/scheduler.hpp"
#include "node/node_setup.hpp"
#include "selection/selection.hpp"

struct braid_comm_s {
  std::unique_ptr<braid::detail::World> world;
  // Before the scheduler: its collectives use the node's channel.
  std::unique_ptr<braid::detail::NodeResources> node;
  std::unique_ptr<braid::coll::Scheduler> scheduler;
  braid::coll::SelectionTable selection;
  // The last selection made: applications repeat the same call, and choosing costs a few
  // percent of a 0.2 us node-local call. The table and topology never change after creation.
  struct LastChoice {
    braid::coll::CollKind kind = braid::coll::CollKind::barrier;
    size_t bytes = SIZE_MAX;
    size_t count = SIZE_MAX;
    braid::coll::Choice choice;
    braid::coll::Choice inner;
  } last_choice;
  uint64_t next_seq = 0;
  int rank = 0;
  int size = 1;
  // Declared last, destroyed first: the scheduler keeps a pointer to the watch.
  std::unique_ptr<braid::detail::ControlPlane> control;
  std::unique_ptr<braid::detail::ControlWatch> watch;
};

struct braid_request_s {
  braid_comm_s *comm = nullptr;
  std::shared_ptr<braid::coll::Collective> collective;  // null for a call that had nothing to do
};

namespace braid::detail {

// Builds the world from the environment and the selection table from its overrides.
std::unique_ptr<braid_comm_s> create_comm(const EnvLookup &env);

// Validate, pick the algorithm and start. Throw Failure on bad input. Return the running
// collective, or null when there is nothing to communicate (count 0, one rank).
std::shared_ptr<coll::Collective> start_allreduce(braid_comm_s &comm, const void *sendbuf,
                                                  void *recvbuf, size_t count, int dtype, int op);
std::shared_ptr<coll::Collective> start_broadcast(braid_comm_s &comm, void *buf, size_t count,
                                                  int dtype, int root);
std::shared_ptr<coll::Collective> start_barrier(braid_comm_s &comm);

// Waits for a started collective and throws its failure.
void finish(braid_comm_s &comm, const std::shared_ptr<coll::Collective> &c);

}  // namespace braid::detail
