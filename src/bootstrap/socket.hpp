// Small POSIX socket helpers for the bootstrap. Every socket is non-blocking and every wait is
// a poll bounded by a Deadline, so nothing here can block forever. Sends use MSG_NOSIGNAL so a
// peer that went away is an error code, never a SIGPIPE.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace braid::detail::bs {

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd &operator=(Fd &&other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
};

// A point in time on the monotonic clock, so wall-clock jumps cannot stretch a wait.
class Deadline {
 public:
  static Deadline after(double seconds);
  bool expired() const { return std::chrono::steady_clock::now() >= at_; }
  // Milliseconds left for poll(), rounded up so a wait never wakes just before the deadline.
  int poll_ms() const;
  double seconds_left() const;
  bool operator<(const Deadline &other) const { return at_ < other.at_; }

 private:
  std::chrono::steady_clock::time_point at_;
};

enum class IoState {
  ok,
  closed,   // the peer closed the connection (EOF)
  timeout,  // the deadline passed
  error,    // a socket error; see err
  input,    // send_all with stop_on_input: the peer sent something before we finished
  again,    // recv_some/send_some only: nothing could be transferred right now
};

struct IoResult {
  IoState state = IoState::ok;
  int err = 0;       // errno for IoState::error
  size_t bytes = 0;  // recv_some/send_some: bytes transferred
};

// "connection closed by peer", strerror(err), ... for messages.
std::string describe(const IoResult &result);
std::string errno_text(int err);

// Waits until an fd is ready or the deadline passes; retries EINTR. Returns poll's count (0 on
// timeout).
int poll_until(std::vector<pollfd> &fds, const Deadline &deadline);

// Moves exactly len bytes, handling partial transfers. With stop_on_input, send_all returns
// IoState::input as soon as the peer has something for us (an error report) instead of
// blocking on a peer that stopped reading.
IoResult send_all(int fd, const void *data, size_t len, const Deadline &deadline,
                  bool stop_on_input = false);
IoResult recv_all(int fd, void *data, size_t len, const Deadline &deadline);
// One non-blocking attempt; IoState::again when nothing is available.
IoResult recv_some(int fd, void *data, size_t len);
IoResult send_some(int fd, const void *data, size_t len);

// Non-blocking, close-on-exec, TCP_NODELAY (bootstrap messages are small and latency bound).
void configure_stream(int fd);

// Binds and listens (SO_REUSEADDR) on the first address host:port resolves to. On failure
// returns an invalid Fd and describes why in *error. "::" listens on IPv6 and IPv4 both.
Fd listen_on(const std::string &host, uint16_t port, std::string *error);
// The port a bound socket got (the kernel's choice after binding port 0); 0 on error.
uint16_t local_port(int fd);
// One connection attempt to each address host:port resolves to, until one succeeds or the
// deadline passes. On failure returns an invalid Fd and describes the last error in *error.
Fd connect_once(const std::string &host, uint16_t port, const Deadline &deadline,
                std::string *error);

// "1.2.3.4:5678" or "[::1]:5678" for the peer of a connected socket.
std::string peer_address(int fd);
std::string local_hostname();

}  // namespace braid::detail::bs
