// Inline sends: the payload goes into the work request, so the buffer is free at posting. The
// general send path (send.hpp) posts its small messages through post_inline; isend posts the
// smallest ones itself through try_send_inline, where a small message's latency is the
// instructions its path runs (in the soft-RoCE guest about 2 ns each).
#pragma once

#include "context.hpp"

namespace braid::verbs {

// The header of a message on `conn`; a per-peer class's carries the credits and credit-message
// acknowledgements owed to the peer.
Header header_for(const Conn &conn, MsgType type, uint32_t msn, uint64_t tag, uint32_t length);

// A posted message spends a credit of a per-peer class (or, for a credit message, budget), and
// its header, if it has one, carried what was owed to the peer.
void spend_credit(Conn &conn, bool credit_msg, bool headerless);

// The error of a failed ibv_post_send of `wire` bytes on `conn`; returns BRAID_ERR_TRANSPORT.
int post_failed(Context *ctx, const Conn &conn, size_t wire, int rc);

// Posts an inline send: the header `h` (none when null) and `body` bytes at `data`, with `imm`
// as immediate data when `with_imm`. The device copies inline data while posting, so both may
// live anywhere (the stack, the user's buffer). Takes a send-queue slot; the caller checked
// that one is free.
int post_inline(Context *ctx, Conn &conn, const Header *h, const void *data, size_t body,
                bool with_imm, uint32_t imm);

// isend's fast path for the smallest messages: an eager message that fits inline, to a connection
// with nothing queued, no advert of the peer to consume and a send slot and credit free, is posted
// from here, without the Outgoing description, the class search and the backlog the general
// path goes through. The caller checks ctx->fast_inline and fast_inline_max (inline, so that
// larger messages pay nothing for this path). Returns false (nothing done) when the message does
// not qualify; otherwise the message's number is taken and *rc is the post's result.
bool try_send_inline(Context *ctx, int peer, Request *req, int *rc);

// Sets the fast path's class and size limit once the queue pairs' inline limit is known: the
// sizes where the general path would also send inline, with a header, on one class.
void plan_fast_inline(Context *ctx);

}  // namespace braid::verbs
