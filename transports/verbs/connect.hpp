// Connection setup through librdmacm: every rank listens on an address of its port, the
// addresses go around the bootstrap, and each rank connects to every lower rank once per size
// class. rdma_cm resolves routes and RoCE GIDs, so nobody names a GID index.
#pragma once

#include "context.hpp"

namespace braid::verbs {

// Creates the event channel and the listening id bound to ctx->address (sets ctx->verbs).
int listen_on_device(Context *ctx);

// Exchanges addresses and connects every peer and class; returns when all are established or
// the timeout passed (the error names the peers still missing).
int connect_all(Context *ctx, const braid_bootstrap_t *bootstrap);

}  // namespace braid::verbs
