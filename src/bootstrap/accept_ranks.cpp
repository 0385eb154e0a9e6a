// Rank 0's side of forming the job. Anyone can connect to the bootstrap port, so rank 0 runs
// every handshake concurrently under one poll loop with its own short deadline: a silent or
// slow connection, or garbage, can never hold up the real ranks.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "bootstrap/address.hpp"
#include "bootstrap/frame_io.hpp"
#include "bootstrap/rendezvous.hpp"
#include "bootstrap/text.hpp"
#include "bootstrap/wire.hpp"
#include "log.hpp"

namespace braid::detail::bs {
namespace {

constexpr double kHandshakeSeconds = 3.0;  // a real rank sends its hello at once
constexpr size_t kMaxPending = 1024;       // bounds the fds a connection flood can pin

struct Pending {
  Fd fd;
  std::string peer;
  Deadline deadline;
  std::vector<uint8_t> received;
  bool finished = false;  // admitted or refused; removed after the current poll round
};

class Rendezvous {
 public:
  Rendezvous(const BootstrapConfig &cfg, Fd listener)
      : cfg_(cfg),
        listener_(std::move(listener)),
        where_(format_host_port(cfg.host, cfg.port)),
        deadline_(Deadline::after(cfg.timeout_s)) {
    star_.to_rank.resize(cfg.size);
    star_.hosts.resize(cfg.size);
    star_.hosts[0] = local_hostname();
  }

  ~Rendezvous() {
    for (const Pending &p : pending_)
      log(LogLevel::warn, "bootstrap: closing connection from ", p.peer,
          ", which had not completed its handshake");
  }

  Star run() {
    if (!listener_.valid()) {
      std::string error;
      listener_ = listen_on(cfg_.host, cfg_.port, &error);
      if (!listener_.valid())
        fail(BRAID_ERR_BOOTSTRAP, "rank 0: could not listen on ", where_, ": ", error);
    }
    while (joined_ < cfg_.size - 1) {
      if (deadline_.expired()) fail_forming(timeout_reason());
      poll_once();
      if (!size_mismatch_.empty()) fail_forming(size_mismatch_);
    }
    send_hosts();
    return std::move(star_);
  }

 private:
  void poll_once() {
    // Layout: the listener, then pending handshakes, then joined ranks (watched for EOF).
    std::vector<pollfd> fds{{listener_.get(), POLLIN, 0}};
    Deadline wake = deadline_;
    for (const Pending &p : pending_) {
      fds.push_back({p.fd.get(), POLLIN, 0});
      wake = std::min(wake, p.deadline);
    }
    std::vector<int> joined_ranks;
    for (int r = 1; r < cfg_.size; ++r)
      if (star_.to_rank[r].valid()) {
        fds.push_back({star_.to_rank[r].get(), POLLIN, 0});
        joined_ranks.push_back(r);
      }
    poll_until(fds, wake);

    // Departures first, so a rank that left and rejoined in one round is not a duplicate.
    for (size_t i = 0; i < joined_ranks.size(); ++i)
      if (fds[1 + pending_.size() + i].revents != 0) check_joined(joined_ranks[i]);
    for (size_t i = 0; i < pending_.size(); ++i)
      if (fds[1 + i].revents != 0) read_hello(pending_[i]);
    for (Pending &p : pending_)
      if (!p.finished && p.deadline.expired())
        refuse(p, std::nullopt, cat("no complete handshake within ", kHandshakeSeconds, " s"));
    std::erase_if(pending_, [](const Pending &p) { return p.finished; });
    if (fds[0].revents != 0) accept_new();
  }

  void accept_new() {
    for (;;) {
      int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        // Out of fds or similar: the listener stays readable, so back off instead of spinning.
        log(LogLevel::warn, "bootstrap: accept on ", where_, " failed: ", errno_text(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;
      }
      Pending p{Fd(fd), peer_address(fd), Deadline::after(kHandshakeSeconds), {}, false};
      if (pending_.size() >= kMaxPending) {
        log(LogLevel::warn, "bootstrap: refused connection from ", p.peer, ": more than ",
            kMaxPending, " connections are already handshaking");
        ++refused_;
        continue;
      }
      configure_stream(fd);
      pending_.push_back(std::move(p));
    }
  }

  void read_hello(Pending &p) {
    // Never read past the largest possible hello: anything beyond it is garbage anyway.
    uint8_t buf[kMaxHelloBytes + 1];
    size_t room = sizeof buf - p.received.size();
    IoResult io = recv_some(p.fd.get(), buf, room);
    if (io.state == IoState::again) return;
    if (io.state != IoState::ok) {
      refuse(p, std::nullopt, cat("connection ended during the handshake: ", describe(io)));
      return;
    }
    p.received.insert(p.received.end(), buf, buf + io.bytes);
    HelloParse parsed = parse_hello(p.received);
    if (parsed.state == HelloParse::State::invalid)
      refuse(p, Reply::bad_protocol, parsed.reason);
    else if (parsed.state == HelloParse::State::complete && parsed.consumed != p.received.size())
      refuse(p, Reply::bad_protocol, "sent data after its handshake before being accepted");
    else if (parsed.state == HelloParse::State::complete)
      admit(p, parsed.hello);
  }

  void admit(Pending &p, const Hello &hello) {
    // The key first, so a peer without it learns nothing about the job from the reply.
    if (!keys_equal(hello.key, cfg_.job_key))
      return refuse(p, Reply::bad_key, key_problem(hello.key));
    if (hello.size != static_cast<uint32_t>(cfg_.size)) {
      // With the job's key this is one of its ranks, not a stranger: the job cannot form, and
      // waiting out the timeout would only hide why. (A job without a key cannot tell its
      // ranks from a stale process: it only refuses.)
      if (!cfg_.job_key.empty())
        size_mismatch_ = cat("rank ", hello.rank, " (", p.peer, ") joined a job of ", hello.size,
                             " ranks, but rank 0's has ", cfg_.size,
                             " (BRAID_SIZE, or braid_comm_init_rank's nranks)");
      return refuse(p, Reply::bad_size,
                    cat("claims job size ", hello.size, ", this job has ", cfg_.size, " ranks"));
    }
    if (hello.rank == 0 || hello.rank >= static_cast<uint32_t>(cfg_.size))
      return refuse(p, Reply::bad_rank,
                    cat("claims rank ", hello.rank, ", expected 1..", cfg_.size - 1));
    const int rank = static_cast<int>(hello.rank);
    // The rank may have given up on an earlier connection whose handshake it timed out (its
    // hello still queued here) and be trying again: if that connection has closed, it goes, and
    // this one takes its place.
    if (star_.to_rank[rank].valid()) check_joined(rank);
    if (star_.to_rank[rank].valid())
      return refuse(p, Reply::duplicate_rank,
                    cat("claims rank ", rank, ", which already joined from ",
                        peer_address(star_.to_rank[rank].get())));
    uint8_t reply = static_cast<uint8_t>(Reply::accepted);
    IoResult io = send_some(p.fd.get(), &reply, 1);
    if (io.state != IoState::ok || io.bytes != 1)
      return refuse(p, std::nullopt, cat("could not send the acceptance: ", describe(io)));
    log(LogLevel::info, "bootstrap: rank ", rank, " joined from ", p.peer, " (", hello.host, ")");
    star_.to_rank[rank] = std::move(p.fd);
    star_.hosts[rank] = hello.host;
    p.finished = true;
    ++joined_;
  }

  std::string key_problem(const std::string &presented) const {
    if (presented.empty()) return "presented no job key, but this job requires one";
    if (cfg_.job_key.empty()) return "presented a job key, but this job has none";
    return "presented the wrong job key";
  }

  void refuse(Pending &p, std::optional<Reply> reply, const std::string &why) {
    if (reply) {
      uint8_t byte = static_cast<uint8_t>(*reply);
      send_some(p.fd.get(), &byte, 1);  // best effort: the connection is refused either way
    }
    log(LogLevel::warn, "bootstrap: refused connection from ", p.peer, ": ", why);
    p.fd.reset();
    p.finished = true;
    ++refused_;
  }

  // A joined rank has nothing to say until the job forms, so readability means it went away
  // (or misbehaves). Forget it: a restarted process may join again under the same rank.
  void check_joined(int rank) {
    uint8_t byte;
    IoResult io = recv_some(star_.to_rank[rank].get(), &byte, 1);
    if (io.state == IoState::again) return;
    log(LogLevel::warn, "bootstrap: rank ", rank, " (", peer_address(star_.to_rank[rank].get()),
        ") ", io.state == IoState::ok ? "sent data" : "disconnected",
        " before the job formed; waiting for it to join again");
    star_.to_rank[rank].reset();
    star_.hosts[rank].clear();
    --joined_;
  }

  std::string timeout_reason() const {
    std::vector<int> missing;
    for (int r = 1; r < cfg_.size; ++r)
      if (!star_.to_rank[r].valid()) missing.push_back(r);
    std::string reason = cat("timed out after ", cfg_.timeout_s, " s waiting for ",
                             rank_list(missing), " to connect to ", where_);
    if (refused_ > 0)
      reason += cat(" (refused ", refused_, " other connection", refused_ == 1 ? "" : "s",
                    "; see the warnings logged by rank 0)");
    return reason;
  }

  // Tells the ranks that already joined why the job cannot form, so they fail with the same
  // reason at once instead of timing out on their own.
  [[noreturn]] void fail_forming(const std::string &reason) {
    std::vector<int> fds;
    for (const Fd &fd : star_.to_rank)
      if (fd.valid()) fds.push_back(fd.get());
    report_error(fds, 0, BRAID_ERR_BOOTSTRAP, reason, true);
    fail(BRAID_ERR_BOOTSTRAP, "rank 0: ", reason);
  }

  void send_hosts() {
    std::vector<uint8_t> payload = encode_hosts(star_.hosts);
    FrameHeader header{static_cast<uint32_t>(FrameType::hosts), 0, payload.size()};
    Deadline deadline = Deadline::after(cfg_.timeout_s);
    for (int r = 1; r < cfg_.size; ++r) {
      IoResult io = send_frame(star_.to_rank[r].get(), header, payload.data(), deadline);
      if (io.state == IoState::ok) continue;
      std::string reason =
          cat("lost connection to rank ", r, " while the job was forming: ", describe(io));
      // Ranks before r already consider the job formed; they learn at their first collective.
      std::vector<int> formed, waiting;
      for (int q = 1; q < cfg_.size; ++q)
        if (q != r) (q < r ? formed : waiting).push_back(star_.to_rank[q].get());
      report_error(formed, 1, BRAID_ERR_PEER_FAILED, reason, true);
      report_error(waiting, 0, BRAID_ERR_BOOTSTRAP, reason, true);
      fail(BRAID_ERR_BOOTSTRAP, "rank 0: ", reason);
    }
  }

  const BootstrapConfig &cfg_;
  Fd listener_;
  const std::string where_;
  const Deadline deadline_;
  Star star_;
  std::vector<Pending> pending_;
  int joined_ = 0;
  int refused_ = 0;
  std::string size_mismatch_;  // a rank with the job's key claimed another size
};

}  // namespace

Star accept_ranks(const BootstrapConfig &cfg, Fd listener) {
  return Rendezvous(cfg, std::move(listener)).run();
}

}  // namespace braid::detail::bs
