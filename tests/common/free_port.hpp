// A TCP port on 127.0.0.1 for a test's server to listen on, shared by the unit, bootstrap and
// fault tests.
//
// Binding to port 0 and closing (the usual trick) returns an ephemeral port: the kernel hands the
// same range to every outgoing connection, so a connect() of another test running in parallel
// (ctest -j2) may take it as its local port before this test's server binds it. This picks a
// random port below the ephemeral range instead, which only another test's free_port() can
// pick too (one chance in about 22,000 per pair), and checks that nothing holds it now.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>

namespace braid::test {

inline bool port_bindable(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  // No SO_REUSEADDR: a port still in TIME_WAIT from an earlier test is not taken either.
  const bool ok = bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

inline uint16_t free_port() {
  int first_ephemeral = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> first_ephemeral;
  constexpr int kLowest = 10000;
  if (first_ephemeral > kLowest + 1000) {
    static std::mt19937 rng{std::random_device{}()};
    std::uniform_int_distribution<int> pick(kLowest, first_ephemeral - 1);
    for (int i = 0; i < 1000; ++i)
      if (const auto port = static_cast<uint16_t>(pick(rng)); port_bindable(port)) return port;
  }
  // A machine whose ephemeral range starts low: the kernel's choice, as before.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace braid::test
