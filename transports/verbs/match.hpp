// Tag matching. A peer's matchable messages (eager and RTS) are taken in msn order whatever
// queue pair carried them; each goes to the first posted receive from that peer with its tag, or
// is copied out as unexpected so its receive buffer can be posted again at once.
#pragma once

#include "context.hpp"

namespace braid::verbs {

// A receive completion on connection `conn`: validates, applies credits, matches; the buffer is
// queued for reposting. Malformed bytes fail the peer, naming it and what was wrong.
int on_receive(Context *ctx, Conn &conn, uint32_t slot, size_t byte_len);

// A receive completion of an RDMA WRITE with immediate data on connection `conn`: a direct
// message (direct.hpp), delivered in msn order like the others.
int on_direct_receive(Context *ctx, Conn &conn, uint32_t slot, size_t byte_len, uint32_t imm);

// A receive completion of a SEND with immediate data on connection `conn`: a headerless eager
// message (wire.hpp), its tag known once the messages before it were delivered.
int on_headerless_receive(Context *ctx, Conn &conn, uint32_t slot, size_t byte_len, uint32_t imm);

// irecv: matches an unexpected message or queues the receive.
int post_receive(Context *ctx, Request *req);

// A message to ourselves skips the device.
int deliver_local(Context *ctx, Request *send);

}  // namespace braid::verbs
