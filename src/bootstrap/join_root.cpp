// The side of forming the job that every rank but 0 runs: find rank 0, prove membership with
// the handshake, then wait for rank 0 to report that all ranks have joined.
#include <algorithm>
#include <chrono>
#include <thread>

#include "bootstrap/address.hpp"
#include "bootstrap/frame_io.hpp"
#include "bootstrap/rendezvous.hpp"
#include "bootstrap/wire.hpp"
#include "log.hpp"

namespace braid::detail::bs {
namespace {

struct Handshake {
  enum class Outcome { accepted, refused, retry } outcome = Outcome::retry;
  uint8_t reply = 0;
  std::string error;  // retry: what went wrong, for the final message
};

Handshake handshake(int fd, const std::vector<uint8_t> &hello, const Deadline &deadline) {
  Handshake h;
  IoResult io = send_all(fd, hello.data(), hello.size(), deadline);
  if (io.state == IoState::ok) io = recv_all(fd, &h.reply, 1, deadline);
  if (io.state == IoState::timeout) {
    h.error = "connected, but rank 0 did not answer the handshake";
  } else if (io.state != IoState::ok) {
    // Rank 0 may be restarting or may have dropped us while busy: worth another try.
    h.error = cat("connection lost during the handshake: ", describe(io));
  } else {
    h.outcome = h.reply == static_cast<uint8_t>(Reply::accepted) ? Handshake::Outcome::accepted
                                                                 : Handshake::Outcome::refused;
  }
  return h;
}

// With several addresses, one that silently drops packets must not use up the whole timeout
// before the next is tried; a reachable rank 0 answers a connection attempt well within this.
constexpr double kPerAddressSeconds = 2.0;

std::string address_list(const std::vector<HostPort> &targets) {
  std::string out;
  for (const HostPort &t : targets)
    out += (out.empty() ? "" : ", ") + format_host_port(t.host, t.port);
  return out;
}

}  // namespace

Star join_root(const BootstrapConfig &cfg) {
  using namespace std::chrono_literals;
  std::vector<HostPort> targets{{cfg.host, cfg.port}};
  targets.insert(targets.end(), cfg.more_addresses.begin(), cfg.more_addresses.end());
  const std::string me = cat("rank ", cfg.rank, ": ");
  Hello hello{kProtocolVersion, static_cast<uint32_t>(cfg.rank), static_cast<uint32_t>(cfg.size),
              cfg.job_key, local_hostname()};
  const std::vector<uint8_t> hello_bytes = encode_hello(hello);

  // Rank 0 may start after us: retry with exponential backoff until the timeout. Each round
  // tries rank 0's addresses in order; the first that completes the handshake is rank 0's.
  const Deadline deadline = Deadline::after(cfg.timeout_s);
  std::chrono::duration<double> backoff = 10ms;
  std::vector<std::string> errors(targets.size(), "not tried before the deadline");
  Fd fd;
  size_t reached = 0;
  for (;;) {
    size_t refused = 0;  // addresses whose listener said it is not this job's rank 0
    for (size_t i = 0; i < targets.size() && !fd.valid() && !deadline.expired(); ++i) {
      // The handshake too is bounded per address: a listener that accepts and never answers
      // (not a braid rank 0) must not use up the time of the addresses after it.
      const Deadline attempt =
          targets.size() == 1 ? deadline : std::min(deadline, Deadline::after(kPerAddressSeconds));
      const std::string where = format_host_port(targets[i].host, targets[i].port);
      fd = connect_once(targets[i].host, targets[i].port, attempt, &errors[i]);
      if (!fd.valid()) continue;
      Handshake h = handshake(fd.get(), hello_bytes, attempt);
      if (h.outcome == Handshake::Outcome::accepted) {
        reached = i;
        break;
      }
      fd.reset();
      if (h.outcome == Handshake::Outcome::refused) {
        // Another job's rank 0 (or another program) may hold one of several published addresses
        // (a duplicated private address, a container bridge): its refusal of the key or the
        // protocol is not this job's answer while other addresses remain. Any other refusal is
        // this job's rank 0 speaking.
        const auto reply = static_cast<Reply>(h.reply);
        const bool maybe_another_job =
            targets.size() > 1 && (reply == Reply::bad_key || reply == Reply::bad_protocol);
        if (!maybe_another_job)
          fail(BRAID_ERR_BOOTSTRAP, me, "rank 0 at ", where,
               " refused this rank: ", describe_reply(h.reply),
               reply == Reply::bad_size ? cat("; this rank's is ", cfg.size) : std::string());
        errors[i] =
            cat("refused this rank: ", describe_reply(h.reply), " (not this job's rank 0?)");
        ++refused;
        continue;
      }
      errors[i] = h.error;
    }
    if (fd.valid()) break;
    if (refused == targets.size())
      fail(BRAID_ERR_BOOTSTRAP, me, "every address of rank 0 (", address_list(targets),
           ") refused this rank: ", errors[0]);
    double left = deadline.seconds_left();
    if (left <= 0) {
      if (targets.size() == 1)
        fail(BRAID_ERR_BOOTSTRAP, me, "could not reach rank 0 at ", address_list(targets),
             " after ", cfg.timeout_s, " s: ", errors[0]);
      std::string why;
      for (size_t i = 0; i < targets.size(); ++i)
        why += cat(i == 0 ? "" : "; ", format_host_port(targets[i].host, targets[i].port), ": ",
                   errors[i]);
      fail(BRAID_ERR_BOOTSTRAP, me, "could not reach rank 0 at any of its addresses (",
           address_list(targets), ") after ", cfg.timeout_s, " s: ", why);
    }
    log(LogLevel::trace, "bootstrap: rank 0 at ", address_list(targets),
        " not reachable yet: ", errors.back());
    std::this_thread::sleep_for(std::min(backoff, std::chrono::duration<double>(left)));
    backoff = std::min<std::chrono::duration<double>>(backoff * 2, 1s);
  }
  log(LogLevel::info, "bootstrap: reached rank 0 at ",
      format_host_port(targets[reached].host, targets[reached].port),
      targets.size() == 1 ? ""
                          : cat(" (address ", reached + 1, " of ", targets.size(), ": ",
                                address_list(targets), ")"));

  LinkContext ctx{me + "forming the job: ",
                  0,
                  cfg.timeout_s,
                  BRAID_ERR_BOOTSTRAP,
                  BRAID_ERR_BOOTSTRAP,
                  me + "rank 0 could not form the job: "};
  const Deadline formed_by = Deadline::after(follower_wait_s(cfg.timeout_s));
  const FrameType expected = FrameType::hosts;
  FrameHeader header = await_frame(fd.get(), 0, &expected, formed_by, ctx);
  if (header.length > max_hosts_payload(cfg.size))
    fail_protocol(cat("hosts frame of ", header.length, " bytes"), ctx);
  std::vector<uint8_t> payload(header.length);
  IoResult io = recv_all(fd.get(), payload.data(), payload.size(), formed_by);
  if (io.state != IoState::ok) fail_link(io, ctx);
  auto hosts = decode_hosts(payload, cfg.size);
  if (!hosts) fail_protocol("malformed hosts frame", ctx);

  Star star;
  star.to_root = std::move(fd);
  star.hosts = std::move(*hosts);
  return star;
}

}  // namespace braid::detail::bs
