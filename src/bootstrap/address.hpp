// host:port strings as shown in the bootstrap's messages. (The environment itself is parsed by
// config/env_config; this parser is the bootstrap's own, for tests and tools that need one.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace braid::detail::bs {

struct HostPort {
  std::string host;  // IPv6 addresses without their brackets
  uint16_t port = 0;
};

// Parses "host:port", "1.2.3.4:port" or "[v6addr]:port"; port must be 1..65535. Throws
// Failure(BRAID_ERR_BOOTSTRAP) naming the text and what is wrong with it.
HostPort parse_host_port(std::string_view text);

// The inverse: brackets an IPv6 address so the port stays unambiguous.
std::string format_host_port(const std::string &host, uint16_t port);

}  // namespace braid::detail::bs
