// The C entry points: argument checks, exceptions turned into result codes plus the thread's
// last-error message. Nothing here communicates by itself; see comm_object.cpp.
#include <braid/braid.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "api/comm_object.hpp"
#include "config/env_config.hpp"
#include "error.hpp"
#include "log.hpp"
#include "memory/mem_api.hpp"
#include "memory/topology.hpp"

using braid::detail::Failure;

namespace {

std::mutex g_mutex;  // guards g_world against concurrent init/finalize
std::unique_ptr<braid_comm_s> g_world;
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

braid_comm_s &checked(braid_comm_t comm) {
  if (comm == nullptr || comm != g_world.get())
    braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT,
                        comm == nullptr ? "communicator is NULL"
                                        : "communicator is not valid (finalized or never created)");
  return *comm;
}

braid_request_t make_request(braid_comm_s &comm,
                             std::shared_ptr<braid::coll::Collective> collective) {
  return new braid_request_s{&comm, std::move(collective)};
}

// Reports a finished request's outcome and frees it.
braid_result_t complete(braid_request_t *req) {
  braid_request_t r = *req;
  *req = nullptr;
  braid_result_t rc = BRAID_SUCCESS;
  std::string message;
  if (r->collective && r->collective->result() != BRAID_SUCCESS) {
    rc = r->collective->result();
    message = r->collective->message();
  }
  delete r;
  return rc == BRAID_SUCCESS ? rc : record(rc, std::move(message));
}

}  // namespace

extern "C" {

braid_result_t braid_init(int *argc, char ***argv, braid_comm_t *world) {
  (void)argc;
  (void)argv;
  std::lock_guard lock(g_mutex);
  return guarded([&] {
    if (world == nullptr) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "world is NULL");
    if (g_world) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_init called twice");
    g_world = braid::detail::create_comm(braid::detail::process_env());
    *world = g_world.get();
  });
}

braid_result_t braid_finalize(void) {
  std::lock_guard lock(g_mutex);
  return guarded([&] {
    if (!g_world) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_finalize without init");
    std::unique_ptr<braid_comm_s> world = std::move(g_world);
    if (braid::detail::log_threshold() >= braid::detail::LogLevel::info) {
      std::string counters;
      for (const auto &c : world->world->transport->counters())
        counters += braid::detail::cat(" ", c.name, "=", c.value);
      braid::detail::log(braid::detail::LogLevel::info, world->world->transport->name(),
                         " counters:", counters, "; collectives started: ", world->next_seq);
    }
    // Every rank reaches finalize before any transport goes away, so no message still in flight
    // to a peer is cut off. A failed peer must not keep the others from finishing: the control
    // plane counts a failed rank as having left, and the wait is bounded by BRAID_TIMEOUT.
    try {
      if (world->control) {
        const std::string why = world->control->leave(world->world->config.timeout_s);
        if (!why.empty()) braid::detail::log(braid::detail::LogLevel::warn, "finalize: ", why);
      } else {
        world->world->bootstrap->barrier();
      }
    } catch (const Failure &f) {
      braid::detail::log(braid::detail::LogLevel::warn, "finalize: ", f.message());
    }
  });
}

int braid_comm_rank(braid_comm_t comm) {
  return comm != nullptr && comm == g_world.get() ? comm->rank : -1;
}

int braid_comm_size(braid_comm_t comm) {
  return comm != nullptr && comm == g_world.get() ? comm->size : -1;
}

const char *braid_comm_transport(braid_comm_t comm) {
  if (comm == nullptr || comm != g_world.get()) return nullptr;
  return comm->world->transport->name().c_str();
}

braid_result_t braid_comm_counters(braid_comm_t comm, braid_counter_t *out, size_t *n) {
  return guarded([&] {
    braid_comm_s &c = checked(comm);
    if (n == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_comm_counters: n is NULL");
    if (*n > 0 && out == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT,
                          "braid_comm_counters: out is NULL with *n = ", *n);
    std::vector<braid_transport_counter_t> all = c.world->transport->counters();
    braid_transport_counter_t direct{};
    std::snprintf(direct.name, sizeof direct.name, "intranode_zero_copy_calls");
    direct.value = c.node && c.node->channel ? c.node->channel->direct_calls() : 0;
    all.push_back(direct);
    braid_transport_counter_t own{};
    std::snprintf(own.name, sizeof own.name, "collectives_started");
    own.value = c.next_seq;
    all.push_back(own);
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
    braid_comm_s &c = checked(comm);
    braid::detail::finish(c, braid::detail::start_allreduce(c, sendbuf, recvbuf, count, dtype, op));
  });
}

braid_result_t braid_broadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                               braid_comm_t comm) {
  return guarded([&] {
    braid_comm_s &c = checked(comm);
    braid::detail::finish(c, braid::detail::start_broadcast(c, buf, count, dtype, root));
  });
}

braid_result_t braid_barrier(braid_comm_t comm) {
  return guarded([&] {
    braid_comm_s &c = checked(comm);
    braid::detail::finish(c, braid::detail::start_barrier(c));
  });
}

braid_result_t braid_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                braid_dtype_t dtype, braid_op_t op, braid_comm_t comm,
                                braid_request_t *req) {
  return guarded([&] {
    if (req == nullptr) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "iallreduce: req is NULL");
    braid_comm_s &c = checked(comm);
    *req = make_request(c, braid::detail::start_allreduce(c, sendbuf, recvbuf, count, dtype, op));
  });
}

braid_result_t braid_ibroadcast(void *buf, size_t count, braid_dtype_t dtype, int root,
                                braid_comm_t comm, braid_request_t *req) {
  return guarded([&] {
    if (req == nullptr) braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "ibroadcast: req is NULL");
    braid_comm_s &c = checked(comm);
    *req = make_request(c, braid::detail::start_broadcast(c, buf, count, dtype, root));
  });
}

braid_result_t braid_test(braid_request_t *req, int *done) {
  bool finished = false;
  braid_result_t rc = guarded([&] {
    if (req == nullptr || *req == nullptr || done == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_test: NULL request or done");
    braid_request_t r = *req;
    *done = 0;
    if (r->collective && !r->collective->finished()) {
      checked(r->comm).scheduler->progress();
    }
    finished = !r->collective || r->collective->finished();
  });
  if (rc != BRAID_SUCCESS || !finished) return rc;
  *done = 1;
  return complete(req);
}

braid_result_t braid_wait(braid_request_t *req) {
  braid_result_t rc = guarded([&] {
    if (req == nullptr || *req == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_wait: NULL request");
    braid_request_t r = *req;
    if (r->collective) checked(r->comm).scheduler->wait(*r->collective);
  });
  if (rc != BRAID_SUCCESS) return rc;
  return complete(req);
}

braid_result_t braid_mem_alloc(size_t bytes, int numa_node, void **ptr) {
  return guarded([&] {
    if (ptr == nullptr)
      braid::detail::fail(BRAID_ERR_INVALID_ARGUMENT, "braid_mem_alloc: ptr is NULL");
    *ptr = nullptr;
    int rank_node = -1;
    {
      std::lock_guard lock(g_mutex);
      rank_node = g_world ? g_world->world->numa_node : -2;
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
  return comm != nullptr && comm == g_world.get() ? comm->world->numa_node : -1;
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
