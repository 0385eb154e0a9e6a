#include "bootstrap/address.hpp"

#include "error.hpp"

namespace braid::detail::bs {
namespace {

uint16_t parse_port(std::string_view text, std::string_view whole) {
  if (text.empty()) fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", whole, "' has no port");
  unsigned long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || value > 65535)
      fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", whole, "': port '", text,
           "' is not a number in 1..65535");
    value = value * 10 + static_cast<unsigned long>(c - '0');
  }
  if (value == 0 || value > 65535)
    fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", whole, "': port ", text,
         " is not in 1..65535");
  return static_cast<uint16_t>(value);
}

}  // namespace

HostPort parse_host_port(std::string_view text) {
  HostPort out;
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos)
      fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", text, "' has '[' without ']'");
    out.host = std::string(text.substr(1, close - 1));
    rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':')
      fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", text, "' needs ':port' after ']'");
    rest.remove_prefix(1);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", text, "' is not host:port");
    // A second colon means an IPv6 address; without brackets its last group and the port
    // cannot be told apart.
    if (text.find(':') != colon)
      fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", text,
           "': write IPv6 addresses in brackets, as [addr]:port");
    out.host = std::string(text.substr(0, colon));
    rest = text.substr(colon + 1);
  }
  if (out.host.empty()) fail(BRAID_ERR_BOOTSTRAP, "bootstrap address '", text, "' has no host");
  out.port = parse_port(rest, text);
  return out;
}

std::string format_host_port(const std::string &host, uint16_t port) {
  if (host.find(':') != std::string::npos) return cat('[', host, "]:", port);
  return cat(host, ':', port);
}

}  // namespace braid::detail::bs
