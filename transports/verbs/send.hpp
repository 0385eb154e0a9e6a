// The send side: messages wait in their connection's backlog until the connection has a send
// queue slot, a bounce buffer (unless inline) and, on per-peer classes, a credit. Every message
// piggybacks the credits of receive buffers we posted again; when a peer is owed many and we have
// nothing to send, an explicit credit message goes from the buffers reserved for it.
#pragma once

#include "context.hpp"

namespace braid::verbs {

// Whether an eager message of `bytes` with `tag` to the peer of `ps` goes without a header
// (wire.hpp): headerless messages are on, the header would cost a packet at the port's MTU, and
// the tag is within reach of the last one put on the wire to that peer. Sets *delta.
bool headerless_fits(const Context *ctx, const PeerState &ps, uint64_t tag, size_t bytes,
                     int *delta);

// The smallest class whose buffers hold `wire_bytes`; -1 when none does.
int class_for(const Context *ctx, size_t wire_bytes);

// Queues `out` on connection (peer, klass); progress posts it after the receive buffers were
// posted again. Completion handlers must only queue: a message posted from inside completion
// processing would spend credits the peer just returned without carrying the acknowledgement
// of its credit messages (not yet reposted), and with both sides out of credit-message budget
// nothing would move again.
void enqueue(Context *ctx, int peer, int klass, Outgoing out);

// Queues `out` and posts what it can at once: for isend, outside completion processing.
int send_now(Context *ctx, int peer, int klass, Outgoing out);

// Posts the backlogs and any credit messages that are due.
int flush_sends(Context *ctx);

// Credits a per-peer class starts with (its buffers minus those reserved for credit messages).
int initial_credits(const QueueSpec &spec);
// Owed credits a per-peer connection returns in a message of their own once nothing else
// carries them: half the peer's window.
int credit_message_threshold(const Context *ctx, const Conn &conn);

}  // namespace braid::verbs
