#include "job/rendezvous_board.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include "bootstrap/socket.hpp"
#include "error.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

constexpr size_t kMaxLine = 4096;

std::string service_list(const std::vector<Endpoint> &service) {
  std::string out;
  for (const Endpoint &e : service)
    out += (out.empty() ? "" : ",") + bs::format_host_port(e.host, e.port);
  return out;
}

bool all_loopback(const std::vector<Endpoint> &service) {
  for (const Endpoint &e : service)
    if (e.host.rfind("127.", 0) != 0 && e.host != "::1" && e.host != "localhost") return false;
  return true;
}

// braidrun listens before it starts any rank, so the first round normally succeeds; the
// retries cover a slow network. Returns the connection and sets *where to the address used.
// With one_round, an invalid Fd when no address takes the connection in one round.
bs::Fd connect_to_service(const std::vector<Endpoint> &service, const bs::Deadline &deadline,
                          const std::string &me, std::string *where, bool one_round = false) {
  using namespace std::chrono_literals;
  std::string errors;
  auto backoff = 10ms;
  while (true) {
    errors.clear();
    size_t refused = 0;
    for (const Endpoint &e : service) {
      std::string error;
      const bs::Deadline attempt = std::min(deadline, bs::Deadline::after(2.0));
      bs::Fd fd = bs::connect_once(e.host, e.port, attempt, &error);
      *where = bs::format_host_port(e.host, e.port);
      if (fd.valid()) return fd;
      if (error == bs::errno_text(ECONNREFUSED)) ++refused;
      // Appended piece by piece: a chain of + trips GCC 12's false -Wrestrict at -O3.
      if (!errors.empty()) errors += "; ";
      errors += *where;
      errors += ": ";
      errors += error.empty() ? "no answer before the deadline" : error;
    }
    if (one_round) return bs::Fd();
    // Refused at every address: nothing listens there. The service listens before any rank
    // can know its address (braidrun starts it first; a unique id is made by starting it), so
    // it is gone, and waiting would not bring it back. (A loopback address is this host's own,
    // which says nothing of the service's host: those are tried until the deadline.)
    if (refused == service.size() && !all_loopback(service))
      fail(BRAID_ERR_BOOTSTRAP, me, "the rendezvous service at ", service_list(service),
           " is not there (connection refused): braidrun's ends with its job; a unique id's "
           "with the process that made it, or once the id's group has formed (an id serves one "
           "group: make one per communicator)");
    if (deadline.expired())
      fail(BRAID_ERR_BOOTSTRAP, me,
           "could not reach the rendezvous service (braidrun's, or a unique id's) at ",
           service_list(service), ": ", errors);
    std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(
        backoff, std::chrono::duration<double>(deadline.seconds_left())));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

// The reply line; nullopt (with *lost saying how) when the service closed the connection first.
std::optional<std::string> read_line(int fd, const bs::Deadline &deadline, double timeout_s,
                                     const std::string &me, const std::string &waiting_for,
                                     std::string *lost) {
  std::string line;
  char buf[512];
  while (line.find('\n') == std::string::npos) {
    std::vector<pollfd> fds{{fd, POLLIN, 0}};
    if (bs::poll_until(fds, deadline) == 0)
      fail(BRAID_ERR_BOOTSTRAP, me, "timed out after ", timeout_s,
           " s waiting for the rendezvous service (braidrun's, or a unique id's) ", waiting_for);
    bs::IoResult io = bs::recv_some(fd, buf, sizeof buf);
    if (io.state == bs::IoState::again) continue;
    if (io.state != bs::IoState::ok) {
      *lost = bs::describe(io);
      return std::nullopt;
    }
    line.append(buf, io.bytes);
    if (line.size() > kMaxLine)
      fail(BRAID_ERR_BOOTSTRAP, me,
           "the rendezvous service (braidrun's, or a unique id's) sent an overlong reply");
  }
  line.resize(line.find('\n'));
  return line;
}

}  // namespace

RootContact RendezvousBoard::share(const RootContact *mine) {
  if (mine && !mine->failure.empty()) {
    tell_failure(mine->failure);
    return *mine;
  }
  const std::string me = cat("rank ", rank_, ": ");
  if (job_key_.empty() || job_key_.find_first_of(" \t\r\n") != std::string::npos)
    fail(BRAID_ERR_BOOTSTRAP, me,
         "BRAID_RENDEZVOUS needs a BRAID_JOB_KEY without blanks (braidrun sets both)");
  const bs::Deadline deadline = bs::Deadline::after(timeout_s_);
  std::string where;
  std::string request = cat("braid-rendezvous 1 ", job_key_, " ", rank_, " ");
  if (mine) {
    request += "publish ";
    request += encode_addresses(mine->addresses);
    request += "\n";
  } else {
    request += "lookup\n";
  }
  // Asked again on a new connection when the service closes one before answering: it drops
  // the connections that have waited longest without a request when a flood of them fills it,
  // so this one may have been taken for the flood's. Both requests can be repeated safely.
  std::string reply;
  std::string lost_before;  // how the last connection ended, when it closed before answering
  using namespace std::chrono_literals;
  for (auto backoff = 10ms;; backoff = std::min(backoff * 2, std::chrono::milliseconds(500))) {
    // After a closed connection only one round of connects: a service that was there a moment
    // ago and now takes none is gone (its process exited), and that is said at once.
    bs::Fd fd = connect_to_service(service_, deadline, me, &where, !lost_before.empty());
    if (!fd.valid())
      fail(BRAID_ERR_BOOTSTRAP, me,
           "lost the rendezvous service (braidrun's, or a unique id's) at ", where,
           " before it answered: ", lost_before);
    std::string lost;
    bs::IoResult io = bs::send_all(fd.get(), request.data(), request.size(), deadline);
    const std::string waiting_for =
        mine ? cat("at ", where, " to confirm rank 0's address")
             : cat("at ", where, " to say where rank 0 listens (rank 0 never registered)");
    std::optional<std::string> line;
    if (io.state == bs::IoState::ok)
      line = read_line(fd.get(), deadline, timeout_s_, me, waiting_for, &lost);
    else
      lost = bs::describe(io);
    if (line) {
      reply = *line;
      break;
    }
    if (deadline.expired())
      fail(BRAID_ERR_BOOTSTRAP, me,
           "lost the rendezvous service (braidrun's, or a unique id's) at ", where,
           ": it closed every connection before answering, for ", timeout_s_, " s: ", lost);
    log(LogLevel::info, "bootstrap: the rendezvous service at ", where,
        " closed the connection before answering (", lost, "); asking again");
    lost_before = lost;
    std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(
        backoff, std::chrono::duration<double>(deadline.seconds_left())));
  }
  if (reply.rfind("error ", 0) == 0)
    fail(BRAID_ERR_BOOTSTRAP, me, "the rendezvous service (braidrun's, or a unique id's) at ",
         where, " refused this rank: ", reply.substr(6));
  if (mine) {
    if (reply != "ok")
      fail(BRAID_ERR_BOOTSTRAP, me,
           "unexpected reply from the rendezvous service (braidrun's, or a unique id's) at ", where,
           ": '", reply, "'");
    return *mine;
  }
  if (reply.rfind("root ", 0) != 0)
    fail(BRAID_ERR_BOOTSTRAP, me,
         "unexpected reply from the rendezvous service (braidrun's, or a unique id's) at ", where,
         ": '", reply, "'");
  RootContact contact;
  contact.addresses =
      decode_addresses(reply.substr(5), cat(me, "rank 0's address from braidrun at ", where));
  log(LogLevel::info, "bootstrap: braidrun at ", where, " says rank 0 listens at ",
      reply.substr(5));
  return contact;
}

// One try, briefly, of a request whose answer changes nothing for rank 0.
void RendezvousBoard::say(const std::string &what, const char *why) {
  const std::string me = cat("rank ", rank_, ": ");
  const bs::Deadline deadline = bs::Deadline::after(std::min(timeout_s_, 5.0));
  std::string where, lost;
  try {
    bs::Fd fd = connect_to_service(service_, deadline, me, &where, true);
    const std::string request = cat("braid-rendezvous 1 ", job_key_, " 0 ", what, "\n");
    if (fd.valid() &&
        bs::send_all(fd.get(), request.data(), request.size(), deadline).state == bs::IoState::ok)
      read_line(fd.get(), deadline, timeout_s_, me, cat("to confirm ", why), &lost);
  } catch (const Failure &f) {
    log(LogLevel::info, "bootstrap: could not tell the rendezvous service ", why, ": ",
        f.message());
  }
}

// Under braidrun the job ends anyway when rank 0 exits with its error; under a unique id
// nobody else would end it, and the others would wait out their timeout.
void RendezvousBoard::tell_failure(std::string text) {
  for (char &c : text)
    if (c == '\n' || c == '\r') c = ' ';
  text.resize(std::min<size_t>(text.size(), 1000));
  say(cat("failed ", text), "rank 0's failure");
}

// Unheard, a unique id's service keeps its port until its process exits; braidrun's until the
// job ends.
void RendezvousBoard::formed() {
  say("formed", "that the job formed");
}

}  // namespace braid::detail
