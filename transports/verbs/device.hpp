// Choosing the device and port, and the IP address rdma_cm reaches it by.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <string>

namespace braid::verbs {

struct DeviceChoice {
  std::string name;
  int port = 0;
  sockaddr_storage address{};  // an address of the port's network interface
  std::string address_text;
};

// The first active port of `wanted` (any device when empty; port 0 = first active), and an
// address bound to it. Returns false with the reason in *why (what was found, what to do).
bool choose_device(const std::string &wanted, int wanted_port, DeviceChoice *out, std::string *why);

std::string sockaddr_text(const sockaddr *sa);

}  // namespace braid::verbs
