// The C entry points: argument checks, exceptions turned into result codes plus the thread's
// last-error message. Nothing here communicates by itself; see comm_object.cpp.
#include <braid/braid.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "api/coll_calls.hpp"
#include "api/comm_object.hpp"
#include "api/unique_id.hpp"
#include "config/env_config.hpp"
#include "error.hpp"
#include "log.hpp"
#include "memory/mem_api.hpp"
#include "memory/topology.hpp"
#include "node/home_cpu.hpp"

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

bool live(braid_comm_t comm) {
  return comm != nullptr && comm->magic.load(std::memory_order_acquire) == braid_comm_s::kLive;
}

thread_local std::string g_last_error;

braid_result_t record(braid_result_t code, std::string message) {
  g_last_error = std::move(message);
  braid::detail::log(braid::detail::LogLevel::info, "error: ", g_last_error);
  return code;
}

template <typename F>
braid_result_t guarded(F &&body) {
  try {
    body();
    return BRAID_SUCCESS;
  } catch (const Failure &f) {
    return record(f.code(), f.message());
  } catch (const std::bad_alloc &) {
    return record(BRAID_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return record(BRAID_ERR_INTERNAL, std::string("internal error: ") + e.what());
  }
}

braid::detail::Comm &checked(braid_comm_t comm) {
  if (!live(comm))
    braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT,
                        comm == nullptr ? "communicator is NULL"
                                        : "communicator is not valid (freed, finalized or never "
                                          "created)");
  return *comm->comm;
}

braid_request_t make_request(braid_comm_t handle, braid::detail::Comm &comm,
                             std::shared_ptr<braid::coll::Collective> collective) {
  auto *r = new braid_request_s{handle, &comm, std::move(collective)};
  ++comm.open_requests;
  return r;
}

// The request's communicator while it is alive; null once it has been freed (finalize, or a
// unique-id group's communicator freed): its collective was ended then (~Scheduler), so the
// request only has its outcome left to report.
braid::detail::Comm *request_comm(braid_request_t r) {
  return live(r->handle) && r->handle->comm == r->comm ? r->comm : nullptr;
}

// Reports a finished request's outcome and frees it.
braid_result_t complete(braid_request_t *req) {
  braid_request_t r = *req;
  *req = nullptr;
  const bool alive = live(r->handle) && r->handle->comm == r->comm;
  if (alive) --r->comm->open_requests;
  braid_result_t rc = BRAID_SUCCESS;
  std::string message;
  if (r->collective && !r->collective->finished()) {
    // Its communicator went while another thread waited on it (a misuse): no outcome.
    rc = BRAID_ERR_INVALID_ARGUMENT;
    message = "the request's communicator was freed before it completed";
  } else if (r->collective && r->collective->result() != BRAID_SUCCESS) {
    rc = r->collective->result();
    message = r->collective->message();
    if (alive) r->comm->failed = true;
  }
  delete r;
  return rc == BRAID_SUCCESS ? rc : record(rc, std::move(message));
}

// The blocking and non-blocking entry points of one collective: validate and start with
// `start`, then wait (blocking) or hand out a request.
template <typename Start>
braid_result_t blocking(braid_comm_t comm, Start &&start) {
  return guarded([&] {
    braid::detail::Comm &c = checked(comm);
    braid::detail::Comm::Use use(c);
    braid::detail::Comm::BlockingCall blocking(c);
    braid::detail::finish(c, start(c));
  });
}

template <typename Start>
braid_result_t nonblocking(const char *what, braid_comm_t comm, braid_request_t *req,
                           Start &&start) {
  return guarded([&] {
    if (req == nullptr) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, what, ": req is NULL");
    *req = nullptr;  // a refused call leaves no request to wait for
    braid::detail::Comm &c = checked(comm);
    braid::detail::Comm::Use use(c);
    *req = make_request(comm, c, start(c));
  });
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

braid_result_t braid_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                               braid_dtype_t dtype, braid_op_t op, braid_comm_t comm) {
  return guarded([&] {
    braid::detail::Comm &c = checked(comm);
    braid::detail::Comm::Use use(c);
    braid::detail::Comm::BlockingCall blocking(c);
    braid::detail::finish(c, braid::detail::start_allreduce(c, sendbuf, recvbuf, count, dtype, op));
  });
}

braid_result_t braid_broadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                               braid_comm_t comm) {
  return guarded([&] {
    braid::detail::Comm &c = checked(comm);
    braid::detail::Comm::Use use(c);
    braid::detail::Comm::BlockingCall blocking(c);
    braid::detail::finish(c, braid::detail::start_broadcast(c, buf, count, dtype, root));
  });
}

braid_result_t braid_barrier(braid_comm_t comm) {
  return guarded([&] {
    braid::detail::Comm &c = checked(comm);
    braid::detail::Comm::Use use(c);
    braid::detail::Comm::BlockingCall blocking(c);
    braid::detail::finish(c, braid::detail::start_barrier(c));
  });
}

braid_result_t braid_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                braid_dtype_t dtype, braid_op_t op, braid_comm_t comm,
                                braid_request_t *req) {
  return nonblocking("iallreduce", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_allreduce(c, sendbuf, recvbuf, count, dtype, op);
  });
}

braid_result_t braid_ibroadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                                braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ibroadcast", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_broadcast(c, buf, count, dtype, root);
  });
}

braid_result_t braid_reduce(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                            braid_op_t op, int root, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce(c, sendbuf, recvbuf, count, dtype, op, root);
  });
}
braid_result_t braid_ireduce(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                             braid_op_t op, int root, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ireduce", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce(c, sendbuf, recvbuf, count, dtype, op, root);
  });
}
braid_result_t braid_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                               braid_dtype_t dtype, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgather(c, sendbuf, recvbuf, sendcount, dtype);
  });
}
braid_result_t braid_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                braid_dtype_t dtype, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("iallgather", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgather(c, sendbuf, recvbuf, sendcount, dtype);
  });
}
braid_result_t braid_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                const size_t *recvcounts, const size_t *displs, braid_dtype_t dtype,
                                braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgatherv(c, sendbuf, sendcount, recvbuf, recvcounts, displs,
                                           dtype);
  });
}
braid_result_t braid_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                 const size_t *recvcounts, const size_t *displs,
                                 braid_dtype_t dtype, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("iallgatherv", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_allgatherv(c, sendbuf, sendcount, recvbuf, recvcounts, displs,
                                           dtype);
  });
}
braid_result_t braid_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                    braid_dtype_t dtype, braid_op_t op, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce_scatter(c, sendbuf, recvbuf, recvcount, dtype, op);
  });
}
braid_result_t braid_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                     braid_dtype_t dtype, braid_op_t op, braid_comm_t comm,
                                     braid_request_t *req) {
  return nonblocking("ireduce_scatter", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_reduce_scatter(c, sendbuf, recvbuf, recvcount, dtype, op);
  });
}
braid_result_t braid_alltoall(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                              braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoall(c, sendbuf, recvbuf, count, dtype);
  });
}
braid_result_t braid_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                               braid_dtype_t dtype, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ialltoall", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoall(c, sendbuf, recvbuf, count, dtype);
  });
}
braid_result_t braid_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                               void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                               braid_dtype_t dtype, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoallv(c, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                                          rdispls, dtype);
  });
}
braid_result_t braid_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, braid_dtype_t dtype, braid_comm_t comm,
                                braid_request_t *req) {
  return nonblocking("ialltoallv", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_alltoallv(c, sendbuf, sendcounts, sdispls, recvbuf, recvcounts,
                                          rdispls, dtype);
  });
}
braid_result_t braid_gather(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                            int root, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_gather(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_igather(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                             int root, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("igather", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_gather(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_scatter(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                             int root, braid_comm_t comm) {
  return blocking(comm, [&](braid::detail::Comm &c) {
    return braid::detail::start_scatter(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_iscatter(const void *sendbuf, void *recvbuf, size_t count, braid_dtype_t dtype,
                              int root, braid_comm_t comm, braid_request_t *req) {
  return nonblocking("iscatter", comm, req, [&](braid::detail::Comm &c) {
    return braid::detail::start_scatter(c, sendbuf, recvbuf, count, dtype, root);
  });
}
braid_result_t braid_ibarrier(braid_comm_t comm, braid_request_t *req) {
  return nonblocking("ibarrier", comm, req,
                     [&](braid::detail::Comm &c) { return braid::detail::start_barrier(c); });
}

// A request is completed (complete()) under its communicator's claim: another thread's idle
// wait may be progressing that communicator (Process::progress_others), finishing and
// explaining this very collective, and its outcome is read (and the communicator's count of
// open requests changed) only once nobody is.
braid_result_t braid_test(braid_request_t *req, int *done) {
  bool finished = false, completed = false;
  braid_result_t outcome = BRAID_SUCCESS;
  braid_result_t rc = guarded([&] {
    if (req == nullptr || *req == nullptr || done == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_test: NULL request or done");
    braid_request_t r = *req;
    *done = 0;
    braid::detail::Comm *c = request_comm(r);
    if (c == nullptr) {  // its communicator is gone: nothing runs it, its outcome is settled
      finished = true;
      return;
    }
    // A poll does not wait for another thread's call on this communicator: while that thread
    // has it, the request is not done yet, and the next poll looks again.
    braid::detail::Comm::TryUse use(*c);
    if (!use.held()) return;
    if (r->collective && !r->collective->finished()) {
      c->scheduler->progress();
      // As a wait that idles does: a peer may be waiting in another communicator's call
      // before it can serve this one.
      if (!r->collective->finished() && c->process.others_alive()) c->process.progress_others(c);
    }
    finished = !r->collective || r->collective->finished();
    if (finished) {
      *done = 1;
      outcome = complete(req);
      completed = true;
    }
  });
  if (rc != BRAID_SUCCESS || !finished) return rc;
  *done = 1;
  return completed ? outcome : complete(req);
}

braid_result_t braid_wait(braid_request_t *req) {
  bool completed = false;
  braid_result_t outcome = BRAID_SUCCESS;
  braid_result_t rc = guarded([&] {
    if (req == nullptr || *req == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_wait: NULL request");
    braid_request_t r = *req;
    if (braid::detail::Comm *c = request_comm(r)) {
      braid::detail::Comm::Use use(*c);
      if (r->collective) c->scheduler->wait(*r->collective);
      outcome = complete(req);  // under the claim, as in braid_test
      completed = true;
    }
  });
  if (rc != BRAID_SUCCESS) return rc;
  return completed ? outcome : complete(req);
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
  return g_last_error.c_str();
}

}  // extern "C"
