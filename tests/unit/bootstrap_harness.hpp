// Helpers for the bootstrap tests: run the ranks of a job as threads or as forked processes
// on 127.0.0.1, and speak raw bytes to rank 0 as a hostile client would.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "common/free_port.hpp"
#include "error.hpp"

namespace braid::detail::testing {

// A port nothing listens on right now, outside the kernel's ephemeral range.
using braid::test::free_port;

inline BootstrapConfig config(int rank, int size, uint16_t port, std::string key = "job-key",
                              double timeout_s = 2.0) {
  return BootstrapConfig{rank, size, "127.0.0.1", port, std::move(key), timeout_s};
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What one rank's body did: returned `data` (a test-defined report, "" meaning all checks
// passed) or threw a Failure.
struct Outcome {
  bool ran = false;  // false: the process died or never reported
  bool ok = false;
  braid_result_t code = BRAID_SUCCESS;
  std::string message;
  std::string data;
};

using RankBody = std::function<std::string(int rank)>;

inline Outcome run_body(const RankBody &body, int rank) {
  Outcome o;
  o.ran = true;
  try {
    o.data = body(rank);
    o.ok = true;
  } catch (const Failure &f) {
    o.code = f.code();
    o.message = f.message();
  } catch (const std::exception &e) {
    o.code = BRAID_ERR_INTERNAL;
    o.message = std::string("unexpected exception: ") + e.what();
  }
  return o;
}

// start_delay_s[r] (if given) delays rank r's start, e.g. to start rank 0 last.
inline std::vector<Outcome> run_threads(int size, const RankBody &body,
                                        std::vector<double> start_delay_s = {}) {
  std::vector<Outcome> outcomes(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      if (r < static_cast<int>(start_delay_s.size()))
        std::this_thread::sleep_for(std::chrono::duration<double>(start_delay_s[r]));
      outcomes[r] = run_body(body, r);
    });
  for (auto &t : threads) t.join();
  return outcomes;
}

namespace internal {
inline void put_string(std::string &out, const std::string &s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  out.append(reinterpret_cast<const char *>(&n), 4);
  out += s;
}
inline bool get_string(const std::string &in, size_t &at, std::string &s) {
  uint32_t n;
  if (in.size() - at < 4) return false;
  std::memcpy(&n, in.data() + at, 4);
  at += 4;
  if (in.size() - at < n) return false;
  s = in.substr(at, n);
  at += n;
  return true;
}
}  // namespace internal

// Each rank in its own process, as in a real job. A child that dies (a body may _exit or
// raise SIGKILL on purpose) reports ran == false. Children still running after limit_s are
// killed, so a hung bootstrap fails the test instead of hanging it.
inline std::vector<Outcome> run_forked(int size, const RankBody &body, double limit_s = 10) {
  std::vector<pid_t> pids(size, -1);
  std::vector<int> pipes(size, -1);
  for (int r = 0; r < size; ++r) {
    int fds[2];
    if (pipe(fds) != 0) break;
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      Outcome o = run_body(body, r);
      std::string wire(1, o.ok ? 'O' : 'F');
      wire += std::to_string(static_cast<int>(o.code)) + '\n';
      internal::put_string(wire, o.message);
      internal::put_string(wire, o.data);
      for (size_t done = 0; done < wire.size();) {
        ssize_t n = write(fds[1], wire.data() + done, wire.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      _exit(0);  // skip gtest's and the parent's atexit handlers
    }
    close(fds[1]);
    pids[r] = pid;
    pipes[r] = fds[0];
  }

  std::vector<std::string> raw(size);
  auto start = std::chrono::steady_clock::now();
  int open_pipes = size;
  while (open_pipes > 0 && seconds_since(start) < limit_s) {
    std::vector<pollfd> fds;
    std::vector<int> ranks;
    for (int r = 0; r < size; ++r)
      if (pipes[r] >= 0) {
        fds.push_back({pipes[r], POLLIN, 0});
        ranks.push_back(r);
      }
    if (poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        raw[ranks[i]].append(buf, static_cast<size_t>(n));
      } else {
        close(pipes[ranks[i]]);
        pipes[ranks[i]] = -1;
        --open_pipes;
      }
    }
  }
  std::vector<Outcome> outcomes(size);
  for (int r = 0; r < size; ++r) {
    if (pipes[r] >= 0) close(pipes[r]);
    if (pids[r] > 0) {
      kill(pids[r], SIGKILL);  // no-op for a child that already exited (not yet reaped)
      waitpid(pids[r], nullptr, 0);
    }
    const std::string &in = raw[r];
    size_t newline = in.find('\n');
    if (in.empty() || newline == std::string::npos) continue;
    Outcome &o = outcomes[r];
    o.ok = in[0] == 'O';
    o.code = static_cast<braid_result_t>(std::stoi(in.substr(1, newline - 1)));
    size_t at = newline + 1;
    o.ran = internal::get_string(in, at, o.message) && internal::get_string(in, at, o.data);
  }
  return outcomes;
}

// --- A hostile client: raw bytes to rank 0. ---

// Connects to 127.0.0.1:port, retrying while rank 0 is not listening yet. Returns -1 if it
// never succeeds within within_s.
inline int raw_connect(uint16_t port, double within_s = 2.0) {
  auto start = std::chrono::steady_clock::now();
  while (seconds_since(start) < within_s) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0) return fd;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

inline bool raw_send(int fd, const void *data, size_t len) {
  return send(fd, data, len, MSG_NOSIGNAL) == static_cast<ssize_t>(len);
}

// The next byte from fd: 0..255, -1 on EOF or error, -2 if nothing arrives within within_s.
inline int raw_read_byte(int fd, double within_s = 2.0) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(within_s * 1000)) <= 0) return -2;
  unsigned char byte;
  return recv(fd, &byte, 1, 0) == 1 ? byte : -1;
}

// True if rank 0 has closed fd (EOF after any pending bytes) within within_s.
inline bool raw_closed_within(int fd, double within_s) {
  auto start = std::chrono::steady_clock::now();
  while (seconds_since(start) < within_s) {
    int b = raw_read_byte(fd, within_s - seconds_since(start));
    if (b == -1) return true;
    if (b == -2) return false;
  }
  return false;
}

}  // namespace braid::detail::testing
