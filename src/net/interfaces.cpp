#include "net/interfaces.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

namespace braid::net {
namespace {

bool starts_with(const std::string &text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Names that container runtimes and virtualisation give their host-side bridges and links.
constexpr std::string_view kContainerPrefixes[] = {
    "docker", "br-",     "virbr", "lxcbr", "lxdbr",  "cni",          "podman", "veth",
    "cali",   "flannel", "weave", "kube-", "cilium", "vxlan.calico", "tunl",
};

}  // namespace

std::vector<Interface> list_interfaces(std::string *error) {
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0) {
    *error = std::string("getifaddrs: ") + std::strerror(errno);
    return {};
  }
  std::vector<Interface> out;
  for (ifaddrs *ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || !(ifa->ifa_flags & IFF_UP)) continue;
    char text[INET6_ADDRSTRLEN] = "";
    Interface entry;
    entry.name = ifa->ifa_name;
    entry.loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    if (ifa->ifa_addr->sa_family == AF_INET) {
      const auto *in = reinterpret_cast<const sockaddr_in *>(ifa->ifa_addr);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    } else if (ifa->ifa_addr->sa_family == AF_INET6) {
      const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(ifa->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) continue;
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
      entry.ipv6 = true;
    } else {
      continue;
    }
    entry.address = text;
    out.push_back(std::move(entry));
  }
  freeifaddrs(list);
  return out;
}

IfnameFilter parse_ifname_filter(std::string_view text) {
  IfnameFilter filter;
  if (!text.empty() && text.front() == '^') {
    filter.exclude = true;
    text.remove_prefix(1);
  }
  if (!text.empty() && text.front() == '=') {
    filter.exact = true;
    text.remove_prefix(1);
  }
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    if (!item.empty()) filter.names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return filter;
}

bool filter_matches(const IfnameFilter &filter, const std::string &name) {
  const bool listed = std::any_of(filter.names.begin(), filter.names.end(), [&](const auto &n) {
    return filter.exact ? name == n : starts_with(name, n);
  });
  return filter.exclude ? !listed : listed;
}

std::string automatic_skip_reason(const Interface &interface) {
  if (interface.loopback) return "loopback";
  for (std::string_view prefix : kContainerPrefixes)
    if (starts_with(interface.name, prefix)) return "container bridge";
  return "";
}

std::string describe(const std::vector<Interface> &interfaces) {
  std::string out;
  for (const Interface &i : interfaces)
    out += (out.empty() ? "" : ", ") + i.address + " (" + i.name + ")";
  return out.empty() ? "none" : out;
}

AddressChoice choose_addresses(const std::vector<Interface> &all, const char *ifname) {
  AddressChoice choice;
  const bool have_filter = ifname != nullptr && *ifname != '\0';
  // No filter behaves as an empty exclusion list: everything passes, automatic rules apply.
  IfnameFilter filter;
  filter.exclude = true;
  if (have_filter) filter = parse_ifname_filter(ifname);
  if (have_filter && filter.names.empty()) {
    choice.error = std::string("BRAID_SOCKET_IFNAME='") + ifname + "' names no interface";
    return choice;
  }

  std::vector<Interface> loopback;
  std::vector<std::string> skipped;  // "lo (loopback)", once per interface name
  for (const Interface &i : all) {
    if (!filter_matches(filter, i.name)) continue;
    // An inclusion list is the user's explicit choice; only exclusion lists and the automatic
    // choice apply the automatic rules.
    const std::string why = filter.exclude ? automatic_skip_reason(i) : "";
    if (why.empty()) {
      choice.chosen.push_back(i);
      continue;
    }
    if (i.loopback) loopback.push_back(i);
    std::string note = i.name + " (" + why + ")";
    if (std::find(skipped.begin(), skipped.end(), note) == skipped.end()) skipped.push_back(note);
  }
  // IPv4 first: an IPv6 address is more often only partly routed on clusters.
  std::stable_partition(choice.chosen.begin(), choice.chosen.end(),
                        [](const Interface &i) { return !i.ipv6; });

  std::string skipped_text;
  for (const std::string &s : skipped) skipped_text += (skipped_text.empty() ? "" : ", ") + s;
  if (have_filter)
    choice.reason = std::string("chosen by BRAID_SOCKET_IFNAME=") + ifname;
  else
    choice.reason = "chosen automatically";
  if (!skipped_text.empty()) choice.reason += "; skipped " + skipped_text;

  if (choice.chosen.empty() && !loopback.empty()) {
    std::stable_partition(loopback.begin(), loopback.end(),
                          [](const Interface &i) { return !i.ipv6; });
    choice.chosen = loopback;
    choice.reason += "; no other interface has an address, so only ranks on this host can connect";
  }
  if (choice.chosen.empty()) {
    choice.error = have_filter
                       ? std::string("BRAID_SOCKET_IFNAME=") + ifname +
                             " matches no interface with an address; interfaces: " + describe(all)
                       : "no network interface has an address; interfaces: " + describe(all);
  }
  return choice;
}

}  // namespace braid::net
