// The C entry points of the library and its communicators: init and finalize, unique ids,
// split, dup and free, counters, memory, errors (the collectives': c_api_collectives.cpp;
// what they share: c_api_support.hpp). Nothing here communicates by itself; see
// comm_object.cpp.
#include <braid/braid.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/c_api_support.hpp"
#include "api/comm_object.hpp"
#include "api/unique_id.hpp"
#include "config/env_config.hpp"
#include "error.hpp"
#include "log.hpp"
#include "memory/mem_api.hpp"
#include "memory/topology.hpp"
#include "node/home_cpu.hpp"

using braid::capi::checked;
using braid::capi::guarded;
using braid::capi::live;
using braid::detail::Failure;

namespace {

std::mutex g_mutex;  // guards g_process and the handle pool against concurrent init/finalize/free
std::unique_ptr<braid::detail::Process> g_process;
// Groups formed from unique ids (braid_comm_init_rank), alive until their communicator is freed
// or braid_finalize.
std::vector<std::unique_ptr<braid::detail::Process>> g_embedded;
// Communicator handles are never freed before exit, nor given to another communicator: a freed
// one is marked dead for good, so a stale handle (freed, or from before finalize) is recognised
// rather than read after free or taken for a newer communicator (a few bytes per communicator
// a program ever makes).
std::vector<std::unique_ptr<braid_comm_s>> g_handles;

braid_comm_s *new_handle(braid::detail::Comm *comm) {
  g_handles.push_back(std::make_unique<braid_comm_s>());
  g_handles.back()->comm = comm;
  g_handles.back()->magic.store(braid_comm_s::kLive, std::memory_order_release);
  return g_handles.back().get();
}

void retire_handle(braid_comm_s *h) {
  h->magic.store(0, std::memory_order_release);
  h->comm = nullptr;
}

// Leaves a process's job: every rank reaches this before any transport goes away, so no
// message still in flight to a peer is cut off. A failed peer must not keep the others from
// finishing: the control plane counts a failed rank as having left, and the wait is bounded by
// BRAID_TIMEOUT. Then the process context (every communicator of it, the transport) goes.
// Leaving a job is said first and waited for after (finish_leaving), so that braid_finalize
// can say it to every job it is in before it waits for any (see ControlPlane::start_leave).
void start_leaving(braid::detail::Process &process) {
  braid::detail::World &world = *process.world;
  if (braid::detail::log_threshold() >= braid::detail::LogLevel::info) {
    std::string counters;
    for (const auto &c : world.transport->counters())
      counters += braid::detail::cat(" ", c.name, "=", c.value);
    braid::detail::log(braid::detail::LogLevel::info, world.transport->name(),
                       " counters:", counters,
                       "; collectives started: ", process.world_comm().next_seq);
  }
  if (process.control) process.control->start_leave();
}

void finish_leaving(std::unique_ptr<braid::detail::Process> process) {
  braid::detail::World &world = *process->world;
  try {
    if (process->control) {
      const std::string why = process->control->wait_left(world.config.timeout_s);
      if (!why.empty()) braid::detail::log(braid::detail::LogLevel::warn, "finalize: ", why);
    } else {
      world.bootstrap->barrier();
    }
  } catch (const Failure &f) {
    braid::detail::log(braid::detail::LogLevel::warn, "finalize: ", f.message());
  }
}

void leave(std::unique_ptr<braid::detail::Process> process) {
  start_leaving(*process);
  finish_leaving(std::move(process));
}

// Retires the handles of every communicator of `process`.
void retire_handles_of(const braid::detail::Process *process) {
  for (const auto &h : g_handles)
    if (h->comm != nullptr && &h->comm->process == process) retire_handle(h.get());
}

}  // namespace

extern "C" {

braid_result_t braid_init(int *argc, char ***argv, braid_comm_t *world) {
  (void)argc;
  (void)argv;
  std::lock_guard lock(g_mutex);
  return guarded([&] {
    if (world == nullptr) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "world is NULL");
    if (g_process) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_init called twice");
    g_process = braid::detail::create_process(braid::detail::process_env());
    *world = new_handle(&g_process->world_comm());
  });
}

braid_result_t braid_finalize(void) {
  std::lock_guard lock(g_mutex);
  return guarded([&] {
    if (!g_process && g_embedded.empty())
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_finalize without init");
    for (const auto &h : g_handles) retire_handle(h.get());
    // Every job is told first: a unique id's group may be left in another order by its other
    // processes (made by other threads), or have another of its ranks in this process, and
    // leaving one job after another would wait for them until BRAID_TIMEOUT.
    std::vector<std::unique_ptr<braid::detail::Process>> leaving = std::move(g_embedded);
    g_embedded.clear();
    if (g_process) leaving.push_back(std::move(g_process));
    for (auto &p : leaving) start_leaving(*p);
    for (auto &p : leaving) finish_leaving(std::move(p));
  });
}

braid_result_t braid_get_unique_id(braid_unique_id_t *id) {
  return guarded([&] {
    if (id == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_get_unique_id: id is NULL");
    *id = braid::detail::make_unique_id();
  });
}

braid_result_t braid_comm_init_rank(braid_comm_t *comm, int nranks, braid_unique_id_t id,
                                    int rank) {
  return guarded([&] {
    if (comm == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_init_rank: comm is NULL");
    *comm = nullptr;
    if (nranks < 1)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_init_rank: nranks is ", nranks,
                          " (at least 1)");
    if (rank < 0 || rank >= nranks)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_init_rank: rank ", rank,
                          " is out of range [0, ", nranks, ")");
    std::unique_ptr<braid::detail::Process> p = braid::detail::join_unique_id(id, nranks, rank);
    std::lock_guard lock(g_mutex);
    *comm = new_handle(&p->world_comm());
    g_embedded.push_back(std::move(p));
  });
}

braid_result_t braid_comm_split(braid_comm_t comm, int color, int key, braid_comm_t *newcomm) {
  return guarded([&] {
    if (newcomm == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_split: newcomm is NULL");
    *newcomm = nullptr;
    braid::detail::Comm &parent = checked(comm);
    braid::detail::Comm::Use use(parent);
    braid::detail::Comm *child = braid::detail::split(parent, color, key);
    if (child == nullptr) return;
    std::lock_guard lock(g_mutex);
    *newcomm = new_handle(child);
  });
}

braid_result_t braid_comm_dup(braid_comm_t comm, braid_comm_t *newcomm) {
  return guarded([&] {
    if (newcomm == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_dup: newcomm is NULL");
    *newcomm = nullptr;
    braid::detail::Comm &parent = checked(comm);
    braid::detail::Comm::Use use(parent);
    braid::detail::Comm *child = braid::detail::split(parent, 0, parent.rank);
    std::lock_guard lock(g_mutex);
    *newcomm = new_handle(child);
  });
}

braid_result_t braid_comm_free(braid_comm_t *comm) {
  return guarded([&] {
    if (comm == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_free: comm is NULL");
    braid_comm_t handle = *comm;
    braid::detail::Comm &c = checked(handle);
    // Claimed and never released: it is destroyed below (or released on a refusal).
    while (!c.try_claim()) std::this_thread::yield();
    struct ReleaseUnlessFreed {
      braid::detail::Comm *c;
      ~ReleaseUnlessFreed() {
        if (c != nullptr) c->release();
      }
    } guard{&c};
    if (&c.process == g_process.get() && c.context == 0)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT,
                          "braid_comm_free: the world communicator is freed by braid_finalize");
    if (c.open_requests != 0)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_free: rank ", c.rank, " has ",
                          c.open_requests,
                          " non-blocking requests on this communicator not yet completed "
                          "(braid_wait or braid_test them first)");
    if (c.context == 0) {  // a unique id's group: what was split from it goes with it
      std::lock_guard lock(c.process.mutex);
      for (const auto &other : c.process.comms)
        if (other->open_requests != 0)
          braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_free: rank ", other->rank,
                              " of a communicator split from this group has ", other->open_requests,
                              " non-blocking requests not yet completed (braid_wait or "
                              "braid_test them first: freeing the group frees it too)");
    }
    std::unique_ptr<braid::detail::Process> doomed;
    {
      std::lock_guard lock(g_mutex);
      guard.c = nullptr;
      *comm = nullptr;
      if (c.context != 0) {
        retire_handle(handle);
        c.process.destroy(&c);
        return;
      }
      // The root communicator of a unique id's group: the group is left, and every
      // communicator split from it goes with it.
      braid::detail::Process *p = &c.process;
      retire_handles_of(p);
      c.release();
      for (auto it = g_embedded.begin(); it != g_embedded.end(); ++it)
        if (it->get() == p) {
          doomed = std::move(*it);
          g_embedded.erase(it);
          break;
        }
    }
    // Outside the lock: leaving waits (up to BRAID_TIMEOUT) for the group's other ranks, and
    // nothing of this group is reachable any more, while other threads' calls on other
    // communicators (init, split, free, finalize) must not wait for it.
    if (doomed) leave(std::move(doomed));
  });
}

int braid_comm_rank(braid_comm_t comm) {
  return live(comm) ? comm->comm->rank : -1;
}

int braid_comm_size(braid_comm_t comm) {
  return live(comm) ? comm->comm->size : -1;
}

const char *braid_comm_transport(braid_comm_t comm) {
  if (!live(comm)) return nullptr;
  return comm->comm->process.world->transport->name().c_str();
}

braid_result_t braid_comm_counters(braid_comm_t comm, braid_counter_t *out, size_t *n) {
  return guarded([&] {
    braid::detail::Comm &c = checked(comm);
    braid::detail::Comm::Use use(c);
    if (n == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_counters: n is NULL");
    if (*n > 0 && out == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT,
                          "braid_comm_counters: out is NULL with *n = ", *n);
    std::vector<braid_transport_counter_t> all = c.process.world->transport->counters();
    auto add = [&all](const char *name, uint64_t value) {
      braid_transport_counter_t counter{};
      std::snprintf(counter.name, sizeof counter.name, "%s", name);
      counter.value = value;
      all.push_back(counter);
    };
    const braid::coll::NodeChannel *ch = c.node ? c.node->channel.get() : nullptr;
    add("intranode_zero_copy_calls", ch != nullptr ? ch->direct_calls() : 0);
    add("intranode_single_copy_calls", ch != nullptr ? ch->single_copy_calls() : 0);
    add("intranode_inline_calls", ch != nullptr ? ch->inline_calls() : 0);
    add("intranode_streamed_calls", ch != nullptr ? ch->streamed_calls() : 0);
    add("intranode_streamed_deposits", ch != nullptr ? ch->streamed_deposit_calls() : 0);
    add("intranode_slow_link_deposits", ch != nullptr ? ch->gauged_streamed_deposits() : 0);
    add("intranode_path", ch != nullptr && c.node->map.local_size() > 1 ? 1 : 0);
    add("home_cpu_moves", braid::detail::home_cpu_moves());
    add("collectives_started", c.next_seq);
    for (size_t i = 0; i < all.size() && i < *n; ++i) {
      static_assert(sizeof out[i].name == sizeof all[i].name);
      std::memcpy(out[i].name, all[i].name, sizeof out[i].name);
      out[i].name[sizeof out[i].name - 1] = '\0';
      out[i].value = all[i].value;
    }
    *n = all.size();
  });
}

braid_result_t braid_mem_alloc(size_t bytes, int numa_node, void **ptr) {
  return guarded([&] {
    if (ptr == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_mem_alloc: ptr is NULL");
    *ptr = nullptr;
    int rank_node = -1;
    {
      std::lock_guard lock(g_mutex);
      rank_node = g_process ? g_process->world->numa_node : -2;
    }
    // Before braid_init the rank's node is its current CPU binding's.
    if (rank_node == -2) rank_node = braid::detail::Topology::get().bound_node();
    *ptr = braid::detail::mem_alloc(bytes, numa_node, rank_node);
  });
}

braid_result_t braid_mem_free(void *ptr) {
  return guarded([&] { braid::detail::mem_free(ptr); });
}

int braid_comm_numa_node(braid_comm_t comm) {
  return live(comm) ? comm->comm->process.world->numa_node : -1;
}

void braid_set_idle_callback(void (*fn)(void *arg), void *arg) {
  braid::detail::set_idle_callback(fn, arg);
}

const char *braid_strerror(braid_result_t r) {
  switch (r) {
    case BRAID_SUCCESS:
      return "success";
    case BRAID_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case BRAID_ERR_MISMATCH:
      return "ranks disagree about the collective's arguments";
    case BRAID_ERR_TIMEOUT:
      return "timed out";
    case BRAID_ERR_PEER_FAILED:
      return "a peer failed";
    case BRAID_ERR_TRANSPORT:
      return "transport error";
    case BRAID_ERR_BOOTSTRAP:
      return "bootstrap failed";
    case BRAID_ERR_NO_MEMORY:
      return "out of memory";
    case BRAID_ERR_UNSUPPORTED:
      return "unsupported";
    case BRAID_ERR_INTERNAL:
      return "internal error";
  }
  return "unknown result code";
}

const char *braid_last_error(void) {
  return braid::capi::last_error().c_str();
}

}  // extern "C"
