// Rendezvous for messages above the eager limit: the sender registers its buffer (or uses the
// caller's registration) and sends an RTS with address, length and rkey; the receiver, once the
// RTS matched a receive, RDMA READs straight into the user's buffer in chunks of at most the
// port's max_msg_sz, then sends a FIN so the sender can release (and deregister) its buffer.
#pragma once

#include "context.hpp"

namespace braid::verbs {

// Fills req->rts; the caller queues the RTS.
int prepare_rendezvous_send(Context *ctx, Request *req);

// The RTS matched `req`: refuse it (FIN with an error) or start reading.
int start_rendezvous_receive(Context *ctx, Request *req, const RtsBody &rts);

// Posts READs that did not fit in the send queue before.
int flush_reads(Context *ctx);

// A READ of `req` completed (ok = false: it failed with `why`).
int on_read_complete(Context *ctx, Request *req, bool ok, int code, const std::string &why);

// The receiver's FIN for one of our sends.
int on_fin(Context *ctx, int peer, const FinBody &fin);

// Drops a request's registration for this rendezvous. `revoke` (the request was cancelled or
// failed, and the application may reuse its buffer at once) also drops a cached registration,
// so no peer can still reach the buffer through its key.
void release_transient(Request *req, bool revoke = false);

}  // namespace braid::verbs
