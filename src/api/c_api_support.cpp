#include "api/c_api_support.hpp"

#include "log.hpp"

namespace braid::capi {

std::string &last_error() {
  thread_local std::string message;
  return message;
}

braid_result_t record(braid_result_t code, std::string message) {
  last_error() = std::move(message);
  detail::log(detail::LogLevel::info, "error: ", last_error());
  return code;
}

detail::Comm &checked(braid_comm_t comm) {
  if (!live(comm))
    detail::fail(BRAID_ERR_INVALID_ARGUMENT,
                 comm == nullptr ? "communicator is NULL"
                                 : "communicator is not valid (freed, finalized or never "
                                   "created)");
  return *comm->comm;
}

braid_request_t make_request(braid_comm_t handle, detail::Comm &comm,
                             std::shared_ptr<coll::Collective> collective) {
  auto *r = new braid_request_s{handle, &comm, std::move(collective)};
  ++comm.open_requests;
  return r;
}

detail::Comm *request_comm(braid_request_t r) {
  return live(r->handle) && r->handle->comm == r->comm ? r->comm : nullptr;
}

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

}  // namespace braid::capi
