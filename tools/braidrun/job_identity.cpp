#include "job_identity.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "net/unique_fd.hpp"

namespace braidrun {

using braid::net::UniqueFd;
namespace {

[[noreturn]] void throw_errno(const char *what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Asks the kernel for a port that is free right now. The socket is closed before rank 0 binds,
// so another process could take the port in between; binding port 0 makes that unlikely
// because the kernel hands ephemeral ports out in a spread-out order.
int pick_free_port() {
  UniqueFd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) throw_errno("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (bind(sock.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
    throw_errno("bind(127.0.0.1:0)");
  }
  socklen_t length = sizeof address;
  if (getsockname(sock.get(), reinterpret_cast<sockaddr *>(&address), &length) != 0) {
    throw_errno("getsockname");
  }
  return ntohs(address.sin_port);
}

std::string random_job_key() {
  UniqueFd urandom(open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!urandom) throw_errno("open /dev/urandom");
  std::array<unsigned char, 16> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t n = read(urandom.get(), bytes.data() + filled, bytes.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("read /dev/urandom");
    if (n == 0) throw std::runtime_error("read /dev/urandom: unexpected end of file");
    filled += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key;
  for (const unsigned char byte : bytes) {
    key += kHex[byte >> 4];
    key += kHex[byte & 0xf];
  }
  return key;
}

}  // namespace

JobIdentity make_job_identity() {
  return {"127.0.0.1:" + std::to_string(pick_free_port()), "", random_job_key()};
}

JobIdentity make_job_key() {
  return {"", "", random_job_key()};
}

}  // namespace braidrun
