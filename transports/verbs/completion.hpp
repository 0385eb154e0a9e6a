// Everything the device and rdma_cm report: work completions (dispatched by wr_id), async events
// (SRQ limit, QP fatal, port down) and connection events (a peer disconnecting).
#pragma once

#include "context.hpp"

namespace braid::verbs {

// One progress pass: completions, events, reposts, backlogged sends and READs.
int progress_all(Context *ctx);

// Sleeps until the CQ, the async fd or the rdma_cm channel has something, at most timeout_ms.
int wait_for_events(Context *ctx, int timeout_ms);

}  // namespace braid::verbs
