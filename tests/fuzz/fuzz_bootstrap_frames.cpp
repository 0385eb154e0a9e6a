// The bootstrap's frame header checks and payload decoders (hosts, error reports).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "bootstrap/wire.hpp"

using namespace braid::detail::bs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < kFrameHeaderBytes + 1) return 0;
  HeaderBytes head;
  std::memcpy(head.data(), data, head.size());
  const FrameHeader h = decode_header(head);
  check_header(h, {FrameType::allgather, FrameType::barrier}, 1);
  check_header(h, {FrameType::result, FrameType::error}, h.seq);
  frame_type_name(h.type);
  const size_t ranks = data[kFrameHeaderBytes] % 64;
  std::span<const uint8_t> payload(data + kFrameHeaderBytes + 1, size - kFrameHeaderBytes - 1);
  if (auto hosts = decode_hosts(payload, ranks)) {
    if (hosts->size() != ranks) __builtin_trap();
    if (encode_hosts(*hosts).size() != payload.size()) __builtin_trap();
  }
  if (auto e = decode_error(payload)) {
    if (encode_error(e->code, e->message).size() != payload.size()) __builtin_trap();
  }
  check_hostname({reinterpret_cast<const char *>(payload.data()), payload.size()});
  return 0;
}
