// Process: what braid_init builds once per process and every communicator shares: the job's
// bootstrap and transport endpoints (World), which ranks share a node, the control plane, the
// selection table, and the context ids in use. Communicators (comm_object.hpp) are views over
// it: a rank map, a context id, a sequence and a scheduler; split and dup open no connection.
#pragma once

#include <atomic>
#include <bitset>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/world.hpp"
#include "control/control_plane.hpp"
#include "engine/scheduler.hpp"
#include "node/node_discovery.hpp"
#include "node/node_map.hpp"
#include "node/node_pool.hpp"
#include "selection/selection.hpp"

namespace braid::detail {

class Comm;

struct Process {
  std::unique_ptr<World> world;
  NodeDiscovery nodes;
  // The node's shared segment (null when the world has none on this node) and the world's node
  // map, which numbers its mailboxes: set once by braid_init, read by splits in any thread
  // without the mutex (comms may grow meanwhile).
  std::shared_ptr<NodePool> node_pool;
  NodeMap world_node_map;
  coll::SelectionTable selection;
  bool oversubscribed = false;  // NodeDiscovery::oversubscribed: idle waits leave the CPU at once
  // Small blocking node-local calls may complete without the scheduler
  // (intranode/inline_call.hpp); BRAID_INLINE=off turns that off, for comparison.
  bool inline_calls = true;
  // Context ids of this process's live communicators: a new communicator takes an id that no
  // member uses, so two ranks sharing two communicators always tell their messages apart.
  std::bitset<coll::Scheduler::kMaxContexts> used_contexts;
  std::vector<std::unique_ptr<Comm>> comms;  // live communicators, the world first
  std::atomic<size_t> live_comms{0};
  // Guards comms and used_contexts: split and free may run in one thread while another
  // thread's idle wait walks the communicators.
  std::mutex mutex;
  // Declared last, destroyed first: communicators' watches refer to it.
  std::unique_ptr<ControlPlane> control;

  Comm &world_comm() { return *comms.front(); }
  // Adds a communicator made by split (context already reserved), under the mutex.
  Comm &add(std::unique_ptr<Comm> comm);
  // Reserves context id `id` if this process does not use it (another thread's split may have
  // taken it since `used` was gathered); release_context gives it back.
  bool reserve_context(size_t id);
  void release_context(size_t id);
  // A snapshot of used_contexts, one byte per id.
  std::vector<uint8_t> contexts_in_use();
  // Called by every API call: from the first call made by a second thread on, the transport
  // is told it is shared by threads.
  void note_thread() {
    if (!threaded_.load(std::memory_order_relaxed) && std::this_thread::get_id() != first_thread_)
      mark_threaded();
  }
  // Progresses the collectives in flight on every communicator but `except`: this process
  // context's and every other one's (braid_init's world and each unique-id group are process
  // contexts of their own, over the same ranks' processes), since a peer may need one of them
  // before it can serve the call waited for (Scheduler::set_idle_hook, braid_test).
  void progress_others(const Comm *except);
  // Whether there is any communicator but one to progress.
  bool others_alive() const;
  // Frees a communicator that is not the world (the caller checked it may be freed).
  void destroy(Comm *comm);
  Process();  // registered for progress_others
  ~Process();

 private:
  void mark_threaded();
  std::thread::id first_thread_ = std::this_thread::get_id();
  std::atomic<bool> threaded_{false};
};

// Builds the world and its communicator from the environment, and the selection table from
// its overrides.
std::unique_ptr<Process> create_process(const EnvLookup &env);
// The same for the job `source` describes (a unique id's group); `env` still gives the node
// settings (BRAID_INTRANODE, ...) and the overrides.
std::unique_ptr<Process> create_process(std::unique_ptr<JobSource> source, const EnvLookup &env);

}  // namespace braid::detail
