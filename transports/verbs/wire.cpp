#include "wire.hpp"

#include <cstring>

namespace braid::verbs {
namespace {

bool bad(std::string *why, std::string text) {
  *why = std::move(text);
  return false;
}

}  // namespace

bool parse_message(const void *data, size_t len, const WireLimits &limits, Message *out,
                   std::string *why) {
  if (len < sizeof(Header))
    return bad(why, "message of " + std::to_string(len) + " bytes is shorter than the " +
                        std::to_string(sizeof(Header)) + "-byte header");
  const auto *bytes = static_cast<const uint8_t *>(data);
  Header h;
  std::memcpy(&h, bytes, sizeof h);
  if (h.klass != limits.klass)
    return bad(why, "header names size class " + std::to_string(h.klass) +
                        " but arrived on class " + std::to_string(limits.klass));
  if (h.credits > limits.max_credits || h.cm_ack > limits.max_credits)
    return bad(why, "header returns " + std::to_string(h.credits) + " credits and " +
                        std::to_string(h.cm_ack) + " credit acks, more than the " +
                        std::to_string(limits.max_credits) + " buffers of the queue");
  size_t body = len - sizeof(Header);
  out->header = h;
  out->payload = nullptr;
  out->payload_len = 0;
  switch (static_cast<MsgType>(h.type)) {
    case MsgType::Eager:
      if (h.length != body)
        return bad(why, "eager header says " + std::to_string(h.length) + " payload bytes, " +
                            std::to_string(body) + " arrived");
      out->payload = bytes + sizeof(Header);
      out->payload_len = body;
      return true;
    case MsgType::Rts:
      if (body != sizeof(RtsBody))
        return bad(why, "rendezvous RTS of " + std::to_string(body) + " body bytes, expected " +
                            std::to_string(sizeof(RtsBody)));
      std::memcpy(&out->rts, bytes + sizeof(Header), sizeof(RtsBody));
      if (out->rts.length > kMaxRendezvousLength || out->rts.addr + out->rts.length < out->rts.addr)
        return bad(why, "rendezvous RTS with an impossible range (" +
                            std::to_string(out->rts.length) + " bytes)");
      return true;
    case MsgType::Fin:
      if (body != sizeof(FinBody))
        return bad(why, "rendezvous FIN of " + std::to_string(body) + " body bytes, expected " +
                            std::to_string(sizeof(FinBody)));
      std::memcpy(&out->fin, bytes + sizeof(Header), sizeof(FinBody));
      return true;
    case MsgType::Credit:
      if (body != 0) return bad(why, "credit message with " + std::to_string(body) + " body bytes");
      return true;
    case MsgType::Advert:
      if (body != sizeof(AdvertBody))
        return bad(why, "advert of " + std::to_string(body) + " body bytes, expected " +
                            std::to_string(sizeof(AdvertBody)));
      std::memcpy(&out->advert, bytes + sizeof(Header), sizeof(AdvertBody));
      if (out->advert.capacity > kMaxRendezvousLength ||
          out->advert.addr + out->advert.capacity < out->advert.addr)
        return bad(why, "advert with an impossible range (" + std::to_string(out->advert.capacity) +
                            " bytes)");
      return true;
    case MsgType::Retract:
    case MsgType::RetractAck:
      if (body != sizeof(RetractBody))
        return bad(why, "retract message of " + std::to_string(body) + " body bytes, expected " +
                            std::to_string(sizeof(RetractBody)));
      std::memcpy(&out->retract, bytes + sizeof(Header), sizeof(RetractBody));
      return true;
    case MsgType::Direct:
    case MsgType::Headerless:
      break;  // never in a header: those messages carry none
  }
  return bad(why, "unknown message type " + std::to_string(h.type));
}

}  // namespace braid::verbs
