// Tagged sends and receives over UCP, and the bookkeeping that turns UCP completions into the
// plugin ABI's test/cancel semantics.
#pragma once

#include "ucx_context.hpp"

namespace braid::ucx {

struct Request {
  Context *ctx = nullptr;
  bool is_send = false;
  int peer = 0;
  uint64_t tag = 0;
  size_t bytes = 0;
  void *ucp_request = nullptr;  // null when UCP completed the operation at once
  bool completed = false;
  ucs_status_t status = UCS_OK;
  size_t received = 0;
};

int post_send(Context *ctx, int peer, uint64_t tag, const void *buf, size_t bytes, ucp_mem_h memh,
              Request **out);
int post_recv(Context *ctx, int peer, uint64_t tag, void *buf, size_t bytes, ucp_mem_h memh,
              Request **out);
// Frees the request when it completed (successfully or not), as the ABI's test() does.
int test_request(Request *req, int *done, size_t *bytes);
int cancel_request(Request *req);

}  // namespace braid::ucx
