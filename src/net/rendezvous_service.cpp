#include "net/rendezvous_service.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "net/interfaces.hpp"

namespace braid::net {
namespace {

constexpr size_t kMaxRequest = 4096;
constexpr size_t kMaxClients = 1024;       // bounds what a connection flood can pin
constexpr long long kRequestMs = 5000;     // a rank sends its request at once
constexpr long long kAcceptPauseMs = 100;  // after accept ran out of file descriptors
constexpr long long kFloodLogMs = 5000;    // dropped connections are summed up this often

// Connections held at once: at most a quarter of the process's file descriptors, so that a
// flood leaves the rest (sockets, plugins' files) to the application that hosts the service.
size_t max_clients() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kMaxClients;
  return std::clamp<size_t>(static_cast<size_t>(r.rlim_cur) / 4, 16, kMaxClients);
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string host_port(const std::string &host, int port) {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + std::to_string(port)
                                             : host + ":" + std::to_string(port);
}

std::string peer_of(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char text[INET6_ADDRSTRLEN] = "?";
  if (getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) return "unknown peer";
  if (addr.ss_family == AF_INET) {
    const auto &in = reinterpret_cast<const sockaddr_in &>(addr);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return host_port(text, ntohs(in.sin_port));
  }
  const auto &in6 = reinterpret_cast<const sockaddr_in6 &>(addr);
  inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
  return host_port(text, ntohs(in6.sin6_port));
}

// Listens on 0.0.0.0 (or dual-stack ::) on a kernel-chosen port; returns the port.
int listen_any(UniqueFd &fd, bool ipv6) {
  fd.reset(socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw std::system_error(errno, std::generic_category(), "rendezvous socket");
  sockaddr_storage addr{};
  socklen_t len;
  if (ipv6) {
    int zero = 0;
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    auto &in6 = reinterpret_cast<sockaddr_in6 &>(addr);
    in6.sin6_family = AF_INET6;
    in6.sin6_addr = in6addr_any;
    len = sizeof in6;
  } else {
    auto &in = reinterpret_cast<sockaddr_in &>(addr);
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_ANY);
    len = sizeof in;
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), len) != 0 ||
      listen(fd.get(), SOMAXCONN) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr *>(&addr), &len) != 0)
    throw std::system_error(errno, std::generic_category(), "rendezvous listen");
  return ntohs(ipv6 ? reinterpret_cast<sockaddr_in6 &>(addr).sin6_port
                    : reinterpret_cast<sockaddr_in &>(addr).sin_port);
}

std::vector<std::string> words_of(const std::string &line) {
  std::vector<std::string> words;
  size_t at = 0;
  while ((at = line.find_first_not_of(' ', at)) != std::string::npos) {
    const size_t end = line.find(' ', at);
    words.push_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

}  // namespace

RendezvousService::RendezvousService(std::string job_key, const char *ifname, bool verbose, Log log)
    : job_key_(std::move(job_key)), verbose_(verbose), log_(std::move(log)), owner_(getpid()) {
  std::string error;
  const auto all = list_interfaces(&error);
  if (!error.empty()) throw std::runtime_error("cannot list network interfaces: " + error);
  const AddressChoice choice = choose_addresses(all, ifname);
  if (choice.chosen.empty())
    throw std::runtime_error("no address for the rendezvous service: " + choice.error);
  const bool ipv6 = std::any_of(choice.chosen.begin(), choice.chosen.end(),
                                [](const Interface &i) { return i.ipv6; });
  const int port = listen_any(listener_, ipv6);
  for (const Interface &i : choice.chosen)
    addresses_ += (addresses_.empty() ? "" : ",") + host_port(i.address, port);
  if (verbose_)
    log_("rendezvous service for ranks on other hosts listens on port " + std::to_string(port) +
         " at " + describe(choice.chosen) + ", " + choice.reason);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  stop_read_.reset(fds[0]);
  stop_write_.reset(fds[1]);
  thread_ = std::thread([this] { run(); });
}

RendezvousService::~RendezvousService() {
  if (getpid() != owner_) {
    // A forked child: a byte down the shared pipe would stop the parent's thread, and the
    // thread is not in this process to join or detach (pthread_detach of it here would mark
    // whatever thread the child made since in that thread's place). Its handle is let go.
    static_cast<void>(new std::thread(std::move(thread_)));
    return;
  }
  const char byte = 0;
  [[maybe_unused]] const ssize_t ignored = write(stop_write_.get(), &byte, 1);
  if (thread_.joinable()) thread_.join();
}

void RendezvousService::run() {
  std::vector<pollfd> fds;
  for (;;) {
    if (formed_) {
      // The port goes now, so that a second use of the id is refused at once by the host:
      // shut down, not only closed, since children forked after the id hold it too.
      clients_.clear();
      shutdown(listener_.get(), SHUT_RDWR);
      listener_.reset();
      finished_.store(true, std::memory_order_release);
      return;
    }
    // While accepting is paused the listener is left out: it stays readable, and polling it
    // would spin.
    const bool paused = now_ms() < accept_paused_until_ms_;
    fds.assign({{stop_read_.get(), POLLIN, 0},
                {listener_.get(), static_cast<short>(paused ? 0 : POLLIN), 0}});
    long long wake = paused ? accept_paused_until_ms_ : -1;
    for (const Client &c : clients_) {
      fds.push_back({c.fd.get(), POLLIN, 0});
      if (!c.waiting) wake = wake < 0 ? c.deadline_ms : std::min(wake, c.deadline_ms);
    }
    const int timeout = wake < 0 ? -1 : static_cast<int>(std::max(0LL, wake - now_ms()));
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      log_(std::string("rendezvous service stopped: poll: ") + std::strerror(errno));
      return;
    }
    if (fds[0].revents != 0) return;
    for (size_t i = 0; i < clients_.size(); ++i)
      if (fds[2 + i].revents != 0 && clients_[i].fd) read_request(clients_[i]);
    const long long now = now_ms();
    for (Client &c : clients_)
      if (c.fd && !c.waiting && now >= c.deadline_ms) refuse(c, "sent no complete request");
    std::erase_if(clients_, [](const Client &c) { return !c.fd; });
    if (fds[1].revents != 0) accept_clients();
    if (dropped_ > 0 && now_ms() >= flood_logged_ms_ + kFloodLogMs) {
      log_("rendezvous service dropped " + std::to_string(dropped_) +
           " connections that had sent no request, to make room (" +
           std::to_string(clients_.size()) + " open; a flood of connections to its port?)");
      dropped_ = 0;
      flood_logged_ms_ = now_ms();
    }
  }
}

void RendezvousService::accept_clients() {
  const size_t limit = max_clients();
  for (;;) {
    UniqueFd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // The connection stays queued and the listener readable: accepting again at once would
        // spin. Ranks retry, so a pause costs them a moment, not their job.
        accept_paused_until_ms_ = now_ms() + kAcceptPauseMs;
        if (!accept_failing_)
          log_(std::string("rendezvous service: accept failed: ") + std::strerror(errno) + " (" +
               std::to_string(clients_.size()) + " connections open); pausing for " +
               std::to_string(kAcceptPauseMs) + " ms at a time until it works again");
        accept_failing_ = true;
      }
      return;  // EAGAIN: nothing more to accept
    }
    accept_failing_ = false;
    if (clients_.size() >= limit && !drop_oldest_silent()) continue;  // all waiting: closed
    Client client{std::move(fd), "", "", false, now_ms() + kRequestMs};
    client.peer = peer_of(client.fd.get());
    clients_.push_back(std::move(client));
  }
}

// A full table makes room by closing the connection that has waited longest without sending a
// request: ranks send theirs at once, so under a flood of silent connections the oldest are
// the flood's, and a rank that connects now is served instead of turned away.
bool RendezvousService::drop_oldest_silent() {
  for (Client &c : clients_)
    if (c.fd && !c.waiting) {
      c.fd.reset();
      ++dropped_;
      std::erase_if(clients_, [](const Client &x) { return !x.fd; });
      return true;
    }
  return false;
}

void RendezvousService::read_request(Client &client) {
  char buf[1024];
  const ssize_t n = read(client.fd.get(), buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {  // the rank gave up or went away; nothing to tell it
    client.fd.reset();
    return;
  }
  if (client.waiting) return refuse(client, "sent data while waiting for rank 0");
  client.received.append(buf, static_cast<size_t>(n));
  const size_t end = client.received.find('\n');
  if (end == std::string::npos) {
    if (client.received.size() > kMaxRequest) refuse(client, "sent an overlong request");
    return;
  }
  handle(client, client.received.substr(0, end));
}

void RendezvousService::handle(Client &client, const std::string &line) {
  const std::vector<std::string> w = words_of(line);
  if (w.size() < 5 || w[0] != "braid-rendezvous" || w[1] != "1")
    return refuse(client, "not a braid rendezvous request");
  if (w[2] != job_key_) return refuse(client, "wrong job key");
  const std::string &rank = w[3];
  if (w[4] == "publish" && w.size() == 6 && rank == "0") {
    // A second rank 0 elsewhere: two processes passed rank 0, or an id used for a second group
    // (whose other ranks may already have been told the first one's address). Said at once,
    // rather than leaving one group to wait out its timeout for a rank 0 that is not coming.
    if (root_ && *root_ != w[5])
      return refuse(client, "rank 0 already registered here, at " + *root_ +
                                " (two processes passed rank 0, or this id served a group "
                                "before: each group needs an id of its own)");
    root_ = w[5];
    answer(client, "ok\n");
    client.fd.reset();
    if (verbose_) log_("rank 0 registered its bootstrap address " + *root_);
    for (Client &c : clients_)
      if (c.fd && c.waiting) {
        answer(c, "root " + *root_ + "\n");
        c.fd.reset();
      }
    return;
  }
  if (w[4] == "failed" && rank == "0" && !root_) {
    // Rank 0 could not listen or choose an address: every rank that asks is told why, at once.
    const size_t at = line.find(" failed ");
    failure_ = at == std::string::npos ? "no reason given" : line.substr(at + 8, 1000);
    if (verbose_) log_("rank 0 failed before it could register: " + failure_);
    answer(client, "ok\n");
    client.fd.reset();
    for (Client &c : clients_)
      if (c.fd && c.waiting) refuse_silently(c, failed_text());
    return;
  }
  // A one-rank group's rank 0 never registers: it only says that its group formed.
  if (w[4] == "formed" && w.size() == 5 && rank == "0") {
    answer(client, "ok\n");
    client.fd.reset();
    if (verbose_) log_("rank 0 says its job formed; the rendezvous service stops");
    for (Client &c : clients_)
      if (c.fd && c.waiting) refuse(c, "rank 0's job formed without this rank");
    formed_ = true;
    return;
  }
  if (w[4] == "lookup" && w.size() == 5 && rank != "0") {
    if (!failure_.empty()) return refuse_silently(client, failed_text());
    if (root_) {
      answer(client, "root " + *root_ + "\n");
      client.fd.reset();
    } else {
      client.waiting = true;  // answered when rank 0 registers
    }
    return;
  }
  refuse(client, "malformed request '" + line.substr(0, 200) + "'");
}

void RendezvousService::answer(Client &client, const std::string &reply) {
  // Replies are a few hundred bytes on a fresh connection, so they fit the socket buffer; a
  // peer that does not read them simply loses them.
  [[maybe_unused]] const ssize_t ignored =
      send(client.fd.get(), reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string RendezvousService::failed_text() const {
  return "rank 0 failed before it could publish its bootstrap address (" + failure_ + ")";
}

void RendezvousService::refuse_silently(Client &client, const std::string &why) {
  answer(client, "error " + why + "\n");
  client.fd.reset();
}

void RendezvousService::refuse(Client &client, const std::string &why) {
  log_("rendezvous service refused " + client.peer + ": " + why);
  refuse_silently(client, why);
}

}  // namespace braid::net
