#include "bootstrap/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>

#include "bootstrap/address.hpp"
#include "error.hpp"

namespace braid::detail::bs {
namespace {

using Clock = std::chrono::steady_clock;

struct AddrInfoDeleter {
  void operator()(addrinfo *ai) const { freeaddrinfo(ai); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

AddrInfoList resolve(const std::string &host, uint16_t port, int flags, std::string *error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags | AI_NUMERICSERV;
  addrinfo *list = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) {
    *error = rc == EAI_SYSTEM ? errno_text(errno) : gai_strerror(rc);
    return nullptr;
  }
  return AddrInfoList(list);
}

std::string sockaddr_text(const sockaddr_storage &addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (addr.ss_family == AF_INET) {
    const auto &in = reinterpret_cast<const sockaddr_in &>(addr);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(addr);
    inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    port = ntohs(in6.sin6_port);
  }
  return format_host_port(host, port);
}

// A client connecting to a free local port can, rarely, connect to itself (TCP simultaneous
// open) when the kernel picks that same port as its source port. Such a socket is not rank 0.
bool is_self_connection(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof local, peer_len = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &local_len) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peer_len) != 0) return false;
  return local_len == peer_len && std::memcmp(&local, &peer, local_len) == 0;
}

// Waits for one fd to become ready for `events`. Returns the revents, 0 on timeout.
short wait_for(int fd, short events, const Deadline &deadline) {
  std::vector<pollfd> fds{{fd, events, 0}};
  if (poll_until(fds, deadline) == 0) return 0;
  return fds[0].revents;
}

Fd connect_address(const addrinfo &ai, const Deadline &deadline, std::string *error) {
  Fd fd(socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol));
  if (!fd.valid()) {
    *error = errno_text(errno);
    return Fd();
  }
  if (connect(fd.get(), ai.ai_addr, ai.ai_addrlen) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      *error = errno_text(errno);
      return Fd();
    }
    if (wait_for(fd.get(), POLLOUT, deadline) == 0) {
      *error = "connection attempt timed out";
      return Fd();
    }
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) so_error = errno;
    if (so_error != 0) {
      *error = errno_text(so_error);
      return Fd();
    }
  }
  if (is_self_connection(fd.get())) {
    *error = errno_text(ECONNREFUSED);
    return Fd();
  }
  configure_stream(fd.get());
  return fd;
}

}  // namespace

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Deadline Deadline::after(double seconds) {
  // Clamp so absurd timeouts (or NaN) cannot overflow the clock arithmetic.
  if (!(seconds > 0)) seconds = 0;
  seconds = std::min(seconds, 1e8);
  Deadline d;
  d.at_ = Clock::now() +
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  return d;
}

int Deadline::poll_ms() const {
  auto left = at_ - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<decltype(ms)>(ms, INT_MAX));
}

double Deadline::seconds_left() const {
  return std::max(0.0, std::chrono::duration<double>(at_ - Clock::now()).count());
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r: returns a pointer to the message, which may or may not be buf.
  return strerror_r(err, buf, sizeof buf);
}

std::string describe(const IoResult &result) {
  switch (result.state) {
    case IoState::ok:
      return "success";
    case IoState::closed:
      return "connection closed by peer";
    case IoState::timeout:
      return "timed out";
    case IoState::error:
      return errno_text(result.err);
    case IoState::input:
      return "peer sent data unexpectedly";
    case IoState::again:
      return "would block";
  }
  return "unknown";
}

int poll_until(std::vector<pollfd> &fds, const Deadline &deadline) {
  for (;;) {
    for (auto &p : fds) p.revents = 0;
    int n = ::poll(fds.data(), fds.size(), deadline.poll_ms());
    if (n >= 0) return n;
    if (errno != EINTR && errno != EAGAIN)
      fail(BRAID_ERR_INTERNAL, "bootstrap: poll failed: ", errno_text(errno));
  }
}

IoResult recv_some(int fd, void *data, size_t len) {
  for (;;) {
    ssize_t n = ::recv(fd, data, len, 0);
    if (n > 0) return {IoState::ok, 0, static_cast<size_t>(n)};
    if (n == 0) return {len == 0 ? IoState::ok : IoState::closed, 0, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoState::again, 0, 0};
    return {IoState::error, errno, 0};
  }
}

IoResult send_some(int fd, const void *data, size_t len) {
  for (;;) {
    ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL);
    if (n >= 0) return {IoState::ok, 0, static_cast<size_t>(n)};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoState::again, 0, 0};
    return {IoState::error, errno, 0};
  }
}

IoResult send_all(int fd, const void *data, size_t len, const Deadline &deadline,
                  bool stop_on_input) {
  const auto *p = static_cast<const char *>(data);
  size_t done = 0;
  const short events = static_cast<short>(POLLOUT | (stop_on_input ? POLLIN : 0));
  while (done < len) {
    short revents = wait_for(fd, events, deadline);
    if (revents == 0) return {IoState::timeout, 0, done};
    if (stop_on_input && (revents & (POLLIN | POLLHUP))) return {IoState::input, 0, done};
    IoResult r = send_some(fd, p + done, len - done);
    if (r.state == IoState::error) return {IoState::error, r.err, done};
    done += r.bytes;
  }
  return {IoState::ok, 0, done};
}

IoResult recv_all(int fd, void *data, size_t len, const Deadline &deadline) {
  auto *p = static_cast<char *>(data);
  size_t done = 0;
  while (done < len) {
    if (wait_for(fd, POLLIN, deadline) == 0) return {IoState::timeout, 0, done};
    IoResult r = recv_some(fd, p + done, len - done);
    if (r.state == IoState::closed || r.state == IoState::error) {
      r.bytes = done;
      return r;
    }
    done += r.bytes;
  }
  return {IoState::ok, 0, done};
}

void configure_stream(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Fd listen_on(const std::string &host, uint16_t port, std::string *error) {
  AddrInfoList list = resolve(host, port, AI_PASSIVE, error);
  if (!list) return Fd();
  for (addrinfo *ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    Fd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      *error = cat("socket: ", errno_text(errno));
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6) {
      // Explicitly dual-stack: the system default (net.ipv6.bindv6only) may say otherwise.
      int zero = 0;
      setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      *error = cat("bind: ", errno_text(errno));
      continue;
    }
    if (listen(fd.get(), SOMAXCONN) != 0) {
      *error = cat("listen: ", errno_text(errno));
      continue;
    }
    return fd;
  }
  return Fd();
}

Fd connect_once(const std::string &host, uint16_t port, const Deadline &deadline,
                std::string *error) {
  AddrInfoList list = resolve(host, port, 0, error);
  if (!list) return Fd();
  for (addrinfo *ai = list.get(); ai != nullptr && !deadline.expired(); ai = ai->ai_next) {
    Fd fd = connect_address(*ai, deadline, error);
    if (fd.valid()) return fd;
  }
  return Fd();
}

uint16_t local_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in &>(addr).sin_port);
  if (addr.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6 &>(addr).sin6_port);
  return 0;
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) return "unknown peer";
  return sockaddr_text(addr);
}

std::string local_hostname() {
  char name[256 + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  // Rank 0 accepts only printable hostnames (they end up in logs); keep ours acceptable.
  std::string host(name);
  for (char &c : host)
    if (c < 0x21 || c > 0x7e) c = '?';
  return host;
}

}  // namespace braid::detail::bs
