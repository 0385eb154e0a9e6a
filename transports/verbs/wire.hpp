// The verbs plugin's message format. Every send carries a fixed header; eager messages follow it
// with the payload, rendezvous requests-to-send (RTS) and FINs with a small body. Both ends run
// the same build on the same architecture, so fields are in host byte order.
//
// Nothing received is trusted: parse_message() checks every field against the completion's
// length and the receiving queue before the rest of the plugin looks at it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace braid::verbs {

enum class MsgType : uint8_t {
  Eager = 1,   // payload follows the header
  Rts = 2,     // rendezvous request-to-send: the receiver RDMA READs from the sender
  Fin = 3,     // rendezvous done (or refused): the sender may release its buffer
  Credit = 4,  // explicit credit return, from the receive buffers reserved for it
  // Eager messages straight into posted receives (direct.hpp):
  Advert = 5,      // a posted receive the sender may RDMA WRITE its message into
  Retract = 6,     // the receiver takes its adverts back (a receive is being cancelled)
  RetractAck = 7,  // the sender dropped them; direct messages it sent all have msn < watermark
  // Never in a header: an RDMA WRITE with immediate data into an advertised receive, which
  // carries no header at all (direct.hpp). Only the send side's queue knows this type.
  Direct = 8,
  // Never in a header either: an eager message sent with immediate data instead of a header
  // (below, headerless_imm). Only the send side's queue knows this type.
  Headerless = 9,
};

// Messages that take part in tag matching carry a per-peer sequence number (msn): a peer's
// messages can travel on several queue pairs (one per size class) and are matched in msn order,
// so matching stays in posting order whatever QP each message took.
struct Header {
  uint8_t type;      // MsgType
  uint8_t klass;     // size class the sender chose; must be the class of the receiving QP
  uint16_t credits;  // receive buffers of this QP freed by the sender of this message
  uint16_t cm_ack;   // credit messages it consumed (they use reserved buffers)
  uint16_t reserved;
  uint32_t msn;     // per-peer matching order (Eager, Rts)
  uint32_t length;  // Eager: payload bytes after the header
  uint64_t tag;
};
static_assert(sizeof(Header) == 24);

struct RtsBody {
  uint64_t addr;     // sender's buffer
  uint64_t length;   // message length
  uint64_t send_id;  // sender's request, echoed in the FIN
  uint32_t rkey;
  uint32_t reserved;
};
static_assert(sizeof(RtsBody) == 32);

struct FinBody {
  uint64_t send_id;
  uint64_t length;  // bytes the receiver read
  int32_t status;   // 0, or a braid_result_t (the receive buffer was too short)
  uint32_t reserved;
};
static_assert(sizeof(FinBody) == 24);

// An advertised receive (Advert; the header's tag is the receive's tag, its msn the receiver's
// next expected msn from this sender when it posted the receive).
struct AdvertBody {
  uint64_t addr;      // the receive buffer
  uint64_t capacity;  // its bytes
  uint32_t rkey;
  uint32_t ahead;   // receives of the same tag from this sender posted before it, unmatched
  uint32_t serial;  // the receiver's advert number for this sender (its low 8 bits travel in
                    // the immediate data of the direct message)
  uint32_t reserved;
};
static_assert(sizeof(AdvertBody) == 32);

// Retract: every advert up to `serial` is taken back. RetractAck: `serial` echoed, and every
// direct message the sender had decided on has an msn below `watermark`.
struct RetractBody {
  uint32_t serial;
  uint32_t watermark;
};
static_assert(sizeof(RetractBody) == 8);

// A headerless eager message: SEND WITH IMMEDIATE of the payload alone, for a message whose tag
// is within reach of the previous tag this sender put on the wire to this receiver (in msn
// order: an Eager or RTS header, or another headerless message; direct messages do not count).
// A 24-byte header costs a packet where it pushes a message over the path MTU (a 4 KiB payload
// at a 4 KiB MTU goes in one packet instead of two); only there is one sent (the class is still
// chosen with the header counted, so that the message can take it back). What the header said is
// known without it: the type (eager), the class (the receiving QP's), the length (the completion's
// byte_len), and the msn and the tag from the immediate data [msn:24][tag delta:8]. It returns no
// credits (like a direct message).
constexpr int kHeaderlessMinDelta = -128, kHeaderlessMaxDelta = 127;

inline uint32_t headerless_imm(uint32_t msn, int delta) {
  return (msn << 8) | (static_cast<uint32_t>(delta) & 0xffu);
}
inline int headerless_delta(uint32_t imm) {
  return static_cast<int8_t>(static_cast<uint8_t>(imm & 0xffu));
}

// Whether a header makes a payload of `bytes` one packet longer at an MTU of `mtu` bytes: only
// then is sending it without one worth what the header carries (credits, acknowledgements).
// An empty payload is one packet either way.
inline bool header_costs_a_packet(size_t bytes, size_t mtu) {
  if (bytes == 0 || mtu == 0) return false;
  return (sizeof(Header) + bytes + mtu - 1) / mtu != (bytes + mtu - 1) / mtu;
}

constexpr size_t kMaxControlBytes = sizeof(Header) + sizeof(RtsBody);
static_assert(sizeof(AdvertBody) <= sizeof(RtsBody));
// Rendezvous lengths beyond this are refused as malformed (no real message is 1 TiB).
constexpr uint64_t kMaxRendezvousLength = uint64_t{1} << 40;

struct Message {
  Header header{};
  const uint8_t *payload = nullptr;  // Eager
  size_t payload_len = 0;
  RtsBody rts{};
  FinBody fin{};
  AdvertBody advert{};
  RetractBody retract{};
};

// Limits the receiving QP imposes on what a valid message may say.
struct WireLimits {
  uint8_t klass;  // the class of the QP the message arrived on
  uint8_t class_count;
  uint32_t max_credits;  // at most the buffers that QP's receive queue has
};

// Validates `len` received bytes. On failure returns false and describes the problem in *why.
bool parse_message(const void *data, size_t len, const WireLimits &limits, Message *out,
                   std::string *why);

}  // namespace braid::verbs
