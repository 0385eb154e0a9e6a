#include "device.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <cstring>
#include <vector>

namespace braid::verbs {
namespace {

struct Port {
  std::string device;
  int port;
};

// Active ports of the devices rdma_cm knows, in device order.
std::vector<Port> active_ports(std::string *seen) {
  std::vector<Port> ports;
  int n = 0;
  ibv_context **devices = rdma_get_devices(&n);
  if (devices == nullptr) return ports;
  for (int i = 0; i < n; ++i) {
    ibv_device_attr attr{};
    std::string name = ibv_get_device_name(devices[i]->device);
    if (ibv_query_device(devices[i], &attr) != 0) continue;
    for (int p = 1; p <= attr.phys_port_cnt; ++p) {
      ibv_port_attr pa{};
      if (ibv_query_port(devices[i], static_cast<uint8_t>(p), &pa) != 0) continue;
      *seen += (seen->empty() ? "" : ", ") + name + ":" + std::to_string(p) + " " +
               ibv_port_state_str(pa.state);
      if (pa.state == IBV_PORT_ACTIVE) ports.push_back({name, p});
    }
  }
  rdma_free_devices(devices);
  return ports;
}

// The device and port an address leads to, found by binding an rdma_cm id to it.
bool address_port(const sockaddr *sa, std::string *device, int *port) {
  rdma_cm_id *id = nullptr;
  if (rdma_create_id(nullptr, &id, nullptr, RDMA_PS_TCP) != 0) return false;
  bool ok = rdma_bind_addr(id, const_cast<sockaddr *>(sa)) == 0 && id->verbs != nullptr;
  if (ok) {
    *device = ibv_get_device_name(id->verbs->device);
    *port = id->port_num;
  }
  rdma_destroy_id(id);
  return ok;
}

}  // namespace

std::string sockaddr_text(const sockaddr *sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(sa)->sin_addr, host, sizeof host);
    return std::string(host) + ":" +
           std::to_string(ntohs(reinterpret_cast<const sockaddr_in *>(sa)->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr, host, sizeof host);
    return "[" + std::string(host) +
           "]:" + std::to_string(ntohs(reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_port));
  }
  return "?";
}

bool choose_device(const std::string &wanted, int wanted_port, DeviceChoice *out,
                   std::string *why) {
  std::string seen;
  std::vector<Port> ports = active_ports(&seen);
  const Port *pick = nullptr;
  for (const Port &p : ports) {
    if ((wanted.empty() || p.device == wanted) && (wanted_port == 0 || p.port == wanted_port)) {
      pick = &p;
      break;
    }
  }
  if (pick == nullptr) {
    std::string target = wanted.empty()
                             ? std::string("any RDMA device")
                             : wanted + (wanted_port ? ":" + std::to_string(wanted_port) : "");
    *why = "no active port on " + target + " (ports found: " + (seen.empty() ? "none" : seen) +
           "); load a driver or name another port with BRAID_VERBS_DEVICE=<dev>:<port>, or use "
           "BRAID_TRANSPORT=ucx";
    return false;
  }
  out->name = pick->device;
  out->port = pick->port;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0) {
    *why = std::string("getifaddrs: ") + std::strerror(errno);
    return false;
  }
  // IPv4 first: RoCE v2 with an IPv4 GID is the common setup, and needs no scope id.
  bool found = false;
  for (int family : {AF_INET, AF_INET6}) {
    for (ifaddrs *ifa = list; ifa != nullptr && !found; ifa = ifa->ifa_next) {
      if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != family) continue;
      if ((ifa->ifa_flags & IFF_LOOPBACK) != 0 || (ifa->ifa_flags & IFF_UP) == 0) continue;
      std::string dev;
      int port = 0;
      if (!address_port(ifa->ifa_addr, &dev, &port)) continue;
      if (dev != out->name || port != out->port) continue;
      std::memcpy(&out->address, ifa->ifa_addr,
                  family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
      out->address_text = sockaddr_text(ifa->ifa_addr);
      found = true;
    }
  }
  freeifaddrs(list);
  if (!found)
    *why = "no IP address leads to " + out->name + ":" + std::to_string(out->port) +
           " (rdma_cm needs one on the port's network interface, e.g. IPoIB or the RoCE netdev)";
  return found;
}

}  // namespace braid::verbs
