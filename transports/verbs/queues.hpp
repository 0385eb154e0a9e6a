// The receive side: per size class a registered arena of receive buffers; per-peer classes post
// them to each QP's own receive queue, shared classes to one SRQ. Buffers go back to their queue
// only after their completion was polled and the message copied out or matched (the man pages'
// rule for reuse), as batched linked WR lists.
#pragma once

#include "context.hpp"

namespace braid::verbs {

// Arenas, SRQs (armed with srq_limit) and bounce pools for every class. Needs ctx->pd.
int classes_create(Context *ctx);
void classes_destroy(Context *ctx);

// Posts all receive buffers of a per-peer connection (before it is connected, so the peer's
// first message finds one).
int post_initial_receives(Context *ctx, Conn &conn);

// Posts every consumed buffer again; per-peer credits become returnable only after this.
int flush_reposts(Context *ctx);

// IBV_EVENT_SRQ_LIMIT_REACHED: more buffers for that SRQ (up to its maximum), then re-arm.
int on_srq_limit(Context *ctx, ibv_srq *srq);

}  // namespace braid::verbs
