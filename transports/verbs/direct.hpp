// Eager messages straight into posted receives. An eager message normally lands in a receive
// buffer of the queue and is copied out into the application's buffer once matched. A receive
// WR on a QP is consumed in arrival order, so the payload can only go straight to the
// application's buffer if the sender knows that buffer: when a receive is posted before its
// message arrives, the receiver advertises it (address, key, capacity), and the sender RDMA
// WRITEs the message there with immediate data instead of sending it. The write consumes one
// receive WR like a send (same credits, same queue), carries no header (the immediate holds the
// msn and the advert's serial) and leaves the payload where the application wants it.
//
// Which message an advert is for is decided the same way on both sides, by the matching rules:
// the receiver says how far it had matched the sender's messages when it posted the receive
// (the advert's msn M) and how many receives with the same tag were posted before it and are
// still unmatched (`ahead`). The message that matches it is then the (ahead + 1)-th message with
// that tag from msn M on. The sender counts its messages with that tag sent since M (a ring of
// recent tags): if that message already left, the advert is void and the receive will be matched
// by it as usual; otherwise the sender holds the advert and uses it for that message if the
// message is eager-sized and fits, else sends it as usual. Either way both sides agree, and an
// advert ends when its receive is matched.
//
// Cancelling a posted receive (any of a peer's, since cancelling one changes what the others
// match) takes every advert to that peer back: a Retract, answered by a RetractAck with the msn
// below which every direct message the sender decided on lies; once those arrived, no write can
// touch a buffer the application gets back.
//
// Adverts cost a message each way's worth of work; a receiver whose adverts keep arriving too
// late (the message left before the advert arrived, as in a tight ping-pong) stops sending them
// to that peer and tries again only now and then.
#pragma once

#include "context.hpp"

namespace braid::verbs {

// Smallest receive (and message) worth an advert: below it the copy costs less than the advert.
constexpr size_t kDirectMinBytes = 1024;

// A receive was just queued on its peer's posted list: advertise it if it qualifies.
int maybe_advertise(Context *ctx, Request *req);

// An advertised receive was matched by an ordinary message (`used` false) or by the direct
// message written into it (`used` true): the advert ends.
void end_advert(Context *ctx, Request *req, bool used);

// The sender's side, for every matchable message to `peer` (msn, tag) in msn order: records the
// tag, and returns true with *out set when the message goes as a direct write. `bytes` decides
// whether an advert that matches the message can take it.
bool take_advert(Context *ctx, int peer, uint32_t msn, uint64_t tag, size_t bytes,
                 DirectTarget *out);

// Control messages of the protocol; false with *why for a malformed or impossible one.
bool on_advert(Context *ctx, int peer, const Message &msg, std::string *why);
bool on_retract(Context *ctx, int peer, const RetractBody &body, std::string *why);
bool on_retract_ack(Context *ctx, int peer, const RetractBody &body, std::string *why);

// A direct message in msn order: completes the advertised receive (or drops the bytes of one
// that was cancelled). False with *why when no advert of ours explains it.
bool deliver_direct(Context *ctx, int peer, uint8_t serial, size_t len, std::string *why);

// Whether an outstanding advert depends on posted receive `req`: it is `req`'s own, or one for a
// later receive with its tag (which counts `req` among those ahead of it).
bool advert_counts(const PeerState &ps, const Request *req);

// Before a posted receive of `peer` is cancelled: takes every advert to `peer` back and waits
// (bounded by the timeout) until no direct message can still arrive for them. If the peer does
// not answer in time, it is failed: its queue pairs go to the error state, so nothing it sends
// can land in a buffer the application gets back.
int retract_adverts(Context *ctx, int peer);

// A message matched a receive kept as a cancel's placeholder: dropped (an RTS is refused).
void drop_for_cancel(Context *ctx, Request *req, MsgType type, const RtsBody &rts);

// The peer failed or the context goes away: forget adverts both ways.
void forget_adverts(Context *ctx, int peer);

// Immediate data of a direct message: [msn:24][serial:8], in network byte order on the wire.
inline uint32_t direct_imm(uint32_t msn, uint32_t serial) {
  return (msn << 8) | (serial & 0xffu);
}

}  // namespace braid::verbs
