// What every C entry point shares: handle checks, exceptions turned into result codes plus the
// thread's last-error message (guarded), and the blocking and non-blocking forms of a collective.
// Internal to libbraid (c_api.cpp, c_api_collectives.cpp).
#pragma once

#include <braid/braid.h>

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "api/coll_calls.hpp"
#include "api/comm_object.hpp"
#include "error.hpp"

namespace braid::capi {

// Whether `comm` is a communicator handle still alive (not freed, not from before finalize).
inline bool live(braid_comm_t comm) {
  return comm != nullptr && comm->magic.load(std::memory_order_acquire) == braid_comm_s::kLive;
}

// The calling thread's last error message (braid_last_error).
std::string &last_error();

// Sets the thread's last error and logs it; returns `code`.
braid_result_t record(braid_result_t code, std::string message);

template <typename F>
braid_result_t guarded(F &&body) {
  try {
    body();
    return BRAID_SUCCESS;
  } catch (const detail::Failure &f) {
    return record(f.code(), f.message());
  } catch (const std::bad_alloc &) {
    return record(BRAID_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return record(BRAID_ERR_INTERNAL, std::string("internal error: ") + e.what());
  }
}

// The communicator of a live handle; INVALID_ARGUMENT otherwise.
detail::Comm &checked(braid_comm_t comm);

braid_request_t make_request(braid_comm_t handle, detail::Comm &comm,
                             std::shared_ptr<coll::Collective> collective);

// The request's communicator while it is alive; null once it has been freed (finalize, or a
// unique-id group's communicator freed): its collective was ended then (~Scheduler), so the
// request only has its outcome left to report.
detail::Comm *request_comm(braid_request_t r);

// Reports a finished request's outcome and frees it.
braid_result_t complete(braid_request_t *req);

// The blocking and non-blocking entry points of one collective: validate and start with
// `start`, then wait (blocking) or hand out a request.
template <typename Start>
braid_result_t blocking(braid_comm_t comm, Start &&start) {
  return guarded([&] {
    detail::Comm &c = checked(comm);
    detail::Comm::Use use(c);
    detail::Comm::BlockingCall blocking(c);
    detail::finish(c, start(c));
  });
}

template <typename Start>
braid_result_t nonblocking(const char *what, braid_comm_t comm, braid_request_t *req,
                           Start &&start) {
  return guarded([&] {
    if (req == nullptr) detail::fail(BRAID_ERR_INVALID_ARGUMENT, what, ": req is NULL");
    *req = nullptr;  // a refused call leaves no request to wait for
    detail::Comm &c = checked(comm);
    detail::Comm::Use use(c);
    *req = make_request(comm, c, start(c));
  });
}

}  // namespace braid::capi
