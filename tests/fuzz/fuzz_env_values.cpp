// The small value parsers shared by the environment and the tools: integers, seconds,
// host:port (both the environment's and the bootstrap's own).
#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap/address.hpp"
#include "config/env_config.hpp"
#include "error.hpp"

using namespace braid::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    long long v = parse_integer(text, "BRAID_SIZE", 1, 1 << 20);
    if (v < 1 || v > (1 << 20)) __builtin_trap();
  } catch (const Failure &) {
  }
  try {
    double s = parse_seconds(text, "BRAID_TIMEOUT");
    if (!(s > 0)) __builtin_trap();
  } catch (const Failure &) {
  }
  try {
    std::string host;
    uint16_t port = 0;
    parse_host_port(text, "BRAID_BOOTSTRAP", &host, &port);
    if (port == 0 || host.empty()) __builtin_trap();
  } catch (const Failure &) {
  }
  try {
    bs::HostPort hp = bs::parse_host_port(text);
    bs::HostPort back = bs::parse_host_port(bs::format_host_port(hp.host, hp.port));
    if (back.host != hp.host || back.port != hp.port) __builtin_trap();
  } catch (const Failure &) {
  }
  return 0;
}
