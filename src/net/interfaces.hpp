// Which network interfaces the bootstrap advertises: BRAID_SOCKET_IFNAME (NCCL's syntax, so
// users need not learn a new one) or, when it is unset, an automatic choice. Used by rank 0 to
// say where it listens and by braidrun to say where its rendezvous service listens.
//
// Self-contained on purpose (no braid error types): braidrun compiles this file too, and it
// does not link libbraid.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace braid::net {

struct Interface {
  std::string name;     // "eth0"
  std::string address;  // numeric, IPv6 without brackets
  bool ipv6 = false;
  bool loopback = false;
};

// Up interfaces with an IPv4 address or a routable IPv6 address (link-local IPv6 needs a scope
// id that cannot travel to other hosts), in the kernel's order. On failure returns nothing and
// sets *error.
std::vector<Interface> list_interfaces(std::string *error);

// BRAID_SOCKET_IFNAME: a comma-separated list of name prefixes ("eth,ib"); a leading '^' makes
// it a list to exclude ("^docker,lo"); a leading '=' (after any '^') makes the names exact
// ("=eth0" matches eth0 but not eth0.100).
struct IfnameFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};
IfnameFilter parse_ifname_filter(std::string_view text);
bool filter_matches(const IfnameFilter &filter, const std::string &name);

// Why the automatic choice skips an interface ("loopback", "container bridge"), or "" if it
// does not. Container bridges (docker0, br-<id>, virbr0, cni0, ...) carry addresses that exist
// on many hosts at once, so another host connecting to one reaches itself, not us.
std::string automatic_skip_reason(const Interface &interface);

struct AddressChoice {
  std::vector<Interface> chosen;  // in order of preference; empty means error is set
  std::string reason;             // for the log: "BRAID_SOCKET_IFNAME=eth" or what was skipped
  std::string error;              // when nothing could be chosen: why, listing the interfaces
};

// ifname: BRAID_SOCKET_IFNAME's value, or nullptr when unset. With an inclusion list exactly
// the matching interfaces are chosen (loopback too, if named). Otherwise the automatic rules
// apply (plus the exclusions); if they leave nothing, loopback is chosen, which only ranks on
// the same host can reach, and the reason says so. IPv4 addresses come before IPv6 ones.
AddressChoice choose_addresses(const std::vector<Interface> &all, const char *ifname);

// "10.0.0.5 (eth0), 10.1.0.5 (ib0)" for logs and messages.
std::string describe(const std::vector<Interface> &interfaces);

}  // namespace braid::net
