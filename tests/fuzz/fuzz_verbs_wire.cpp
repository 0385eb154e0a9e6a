// The verbs plugin's message parser: whatever bytes land in a receive buffer, parse_message either
// rejects them or returns fields consistent with the buffer and the receiving queue.
#include <cstddef>
#include <cstdint>
#include <string>

#include "wire.hpp"

using namespace braid::verbs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  // The first two bytes choose the receiving queue's limits; the rest is the message.
  WireLimits limits{static_cast<uint8_t>(data[0] & 7), 8, static_cast<uint32_t>(data[1]) + 1};
  Message m;
  std::string why;
  if (!parse_message(data + 2, size - 2, limits, &m, &why)) {
    if (why.empty()) __builtin_trap();
    return 0;
  }
  if (m.header.klass != limits.klass) __builtin_trap();
  if (m.header.credits > limits.max_credits || m.header.cm_ack > limits.max_credits)
    __builtin_trap();
  if (m.payload_len > size - 2 - sizeof(Header)) __builtin_trap();
  if (m.payload_len > 0 && (m.payload < data + 2 || m.payload + m.payload_len > data + size))
    __builtin_trap();
  if (m.header.type == static_cast<uint8_t>(MsgType::Rts) && m.rts.length > kMaxRendezvousLength)
    __builtin_trap();
  return 0;
}
