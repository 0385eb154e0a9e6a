// Rank 0's handshake parser, fed every prefix of the input as it would arrive from a socket.
#include <cstddef>
#include <cstdint>

#include "bootstrap/wire.hpp"

using namespace braid::detail::bs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxHelloBytes + 64) size = kMaxHelloBytes + 64;  // rank 0 never reads more
  for (size_t n = 0; n <= size; n += 1 + n / 8) {
    HelloParse p = parse_hello({data, n});
    if (p.state == HelloParse::State::complete) {
      // A complete hello round-trips and consumed what it claims.
      if (p.consumed > n) __builtin_trap();
      if (encode_hello(p.hello).size() != p.consumed) __builtin_trap();
      keys_equal(p.hello.key, "job-key");
    }
  }
  describe_reply(size ? data[0] : 0);
  return 0;
}
