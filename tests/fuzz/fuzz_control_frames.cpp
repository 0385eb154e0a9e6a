// The control plane's stream of frames as a rank or rank 0 receives it, split into arbitrary
// reads; every frame that decodes must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>

#include "control/control_wire.hpp"

using namespace braid::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const int ranks = 1 + data[0] % 8;
  const size_t chunk = 1 + data[1] % 64;
  data += 2;
  size -= 2;
  ctl::FrameAssembler in(ranks);
  std::string error;
  for (size_t at = 0; at < size; at += chunk) {
    in.feed({data + at, std::min(chunk, size - at)});
    while (auto m = in.next(&error)) {
      const std::vector<uint8_t> payload = ctl::encode_payload(*m);
      std::string why;
      auto again = ctl::decode_payload(static_cast<uint32_t>(m->type), payload, ranks, &why);
      if (!again || !(*again == *m)) __builtin_trap();
    }
    if (!error.empty()) break;
  }
  return 0;
}
