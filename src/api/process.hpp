// Process: what braid_init builds once per process and every communicator shares: the job's
// bootstrap and transport endpoints (World), which ranks share a node, the control plane, the
// selection table, and the context ids in use. Communicators (comm_object.hpp) are views over
// it: a rank map, a context id, a sequence and a scheduler; split and dup open no connection.
#pragma once

#include <bitset>
#include <memory>
#include <vector>

#include "comm/world.hpp"
#include "control/control_plane.hpp"
#include "engine/scheduler.hpp"
#include "node/node_discovery.hpp"
#include "selection/selection.hpp"

namespace braid::detail {

class Comm;

struct Process {
  std::unique_ptr<World> world;
  NodeDiscovery nodes;
  coll::SelectionTable selection;
  bool oversubscribed = false;  // more ranks on this host than cores this process may use
  // Context ids of this process's live communicators: a new communicator takes an id that no
  // member uses, so two ranks sharing two communicators always tell their messages apart.
  std::bitset<coll::Scheduler::kMaxContexts> used_contexts;
  std::vector<std::unique_ptr<Comm>> comms;  // live communicators, the world first
  // Declared last, destroyed first: communicators' watches refer to it.
  std::unique_ptr<ControlPlane> control;

  Comm &world_comm() { return *comms.front(); }
  // Progresses the collectives in flight on every communicator but `except` (see
  // Scheduler::set_idle_hook).
  void progress_others(const Comm *except);
  // Frees a communicator that is not the world (the caller checked it may be freed).
  void destroy(Comm *comm);
  ~Process();
};

// Builds the world and its communicator from the environment, and the selection table from
// its overrides.
std::unique_ptr<Process> create_process(const EnvLookup &env);

}  // namespace braid::detail
