// Cancelling a request: afterwards the device no longer touches its buffer.
#pragma once

#include "context.hpp"

namespace braid::verbs {

int cancel_request(Context *ctx, Request *req);

}  // namespace braid::verbs
