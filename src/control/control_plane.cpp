#include "control/control_plane.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "bootstrap/socket.hpp"
#include "error.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

// A rank's thread answers an ask at once; this only bounds a rank that is stopped or gone.
constexpr double kGatherSeconds = 2.0;
// A peer that does not read a small control frame for this long is treated as failed.
constexpr double kSendSeconds = 5.0;

}  // namespace

ControlPlane::ControlPlane(bs::Star star, int rank, int size) : rank_(rank), size_(size) {
  if (size_ == 1) return;
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r)
      links_.push_back(Link{std::move(star.to_rank[r]), r, star.hosts[r],
                            ctl::FrameAssembler(size_), Link::State::live});
  } else {
    links_.push_back(Link{std::move(star.to_root), 0, star.hosts[0], ctl::FrameAssembler(size_),
                          Link::State::live});
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0)
    fail(BRAID_ERR_INTERNAL, "rank ", rank_, ": control plane: eventfd: ", bs::errno_text(errno));
  thread_ = std::thread([this] { run(); });
}

ControlPlane::~ControlPlane() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake();
    thread_.join();
  }
  if (wake_fd_ >= 0) close(wake_fd_);
}

std::string ControlPlane::failure_text() const {
  std::lock_guard lock(mutex_);
  return failure_text_;
}

int ControlPlane::failed_rank() const {
  std::lock_guard lock(mutex_);
  return failed_rank_;
}

void ControlPlane::attach(uint32_t context, uint64_t tag, const CallLog *log) {
  std::lock_guard lock(logs_mutex_);
  logs_[context] = {tag, log};
}

void ControlPlane::detach(uint32_t context, const CallLog *log) {
  std::lock_guard lock(logs_mutex_);
  if (auto it = logs_.find(context); it != logs_.end() && it->second.log == log) logs_.erase(it);
}

CallLookup ControlPlane::lookup(uint64_t key, uint64_t tag) const {
  std::lock_guard lock(logs_mutex_);
  auto it = logs_.find(key_context(key));
  if (it == logs_.end() || it->second.tag != tag) return CallLookup{};
  return it->second.log->lookup(key_seq(key));
}

void ControlPlane::wake() {
  uint64_t one = 1;
  // The counter only needs to become non-zero; a full counter is already a wake-up.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

std::optional<std::vector<ctl::RankAnswer>> ControlPlane::query(uint64_t seq, uint64_t tag,
                                                                double timeout_s) {
  if (size_ == 1) return std::vector<ctl::RankAnswer>{ctl::from_lookup(0, lookup(seq, tag))};
  std::unique_lock lock(mutex_);
  if (done_ || root_gone_) return std::nullopt;
  const uint64_t id = next_request_++;
  waiting_.insert(id);
  commands_.push_back({Command::Kind::query, id, seq, {}, tag});
  lock.unlock();
  wake();
  lock.lock();
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  changed_.wait_until(lock, until, [&] { return results_.count(id) || done_ || root_gone_; });
  waiting_.erase(id);
  auto it = results_.find(id);
  if (it == results_.end()) return std::nullopt;
  std::vector<ctl::RankAnswer> answers = std::move(it->second);
  results_.erase(it);
  return answers;
}

void ControlPlane::announce(uint64_t seq, uint64_t tag, const std::string &text, double timeout_s) {
  if (size_ == 1) return;
  std::unique_lock lock(mutex_);
  if (done_ || root_gone_) return;
  commands_.push_back({Command::Kind::notice, tag, seq, text});
  const uint64_t mine = ++notices_queued_;
  lock.unlock();
  wake();
  lock.lock();
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  changed_.wait_until(lock, until, [&] { return notices_sent_ >= mine || done_ || root_gone_; });
}

std::optional<std::string> ControlPlane::notice_for(uint64_t seq, uint64_t tag) const {
  std::lock_guard lock(mutex_);
  auto it = notices_.find({seq, tag});
  if (it == notices_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<uint64_t, std::string>> ControlPlane::notices(uint64_t tag) const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<uint64_t, std::string>> out;
  for (const auto &[key, text] : notices_)
    if (key.second == tag) out.emplace_back(key.first, text);
  return out;
}

void ControlPlane::start_leave() {
  if (size_ == 1) return;
  {
    std::lock_guard lock(mutex_);
    if (root_gone_) return;
    commands_.push_back({Command::Kind::leave, 0, 0, {}});
  }
  wake();
}

std::string ControlPlane::wait_left(double timeout_s) {
  if (size_ == 1) return "";
  std::unique_lock lock(mutex_);
  if (root_gone_) return failure_text_;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  if (!changed_.wait_until(lock, until, [&] { return done_ || root_gone_; }))
    return cat("timed out after ", timeout_s, " s waiting for the other ranks to finalize");
  return root_gone_ ? failure_text_ : "";
}

// ---- the service thread ----------------------------------------------------------------

void ControlPlane::run() {
  std::vector<pollfd> fds;
  std::vector<Link *> polled;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stop_ || done_) return;
    }
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    polled.clear();
    for (Link &l : links_)
      if (l.state != Link::State::gone) {
        fds.push_back({l.fd.get(), POLLIN, 0});
        polled.push_back(&l);
      }
    bs::Deadline wake_at = bs::Deadline::after(1.0);
    for (const auto &[id, g] : gathers_) wake_at = std::min(wake_at, g.deadline);
    bs::poll_until(fds, wake_at);
    if (fds[0].revents != 0) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
    }
    run_commands();
    for (size_t i = 0; i < polled.size(); ++i)
      if (fds[i + 1].revents != 0 && polled[i]->state != Link::State::gone) pump(*polled[i]);
    expire_gathers();
    check_everyone_left();
  }
}

void ControlPlane::run_commands() {
  std::vector<Command> commands;
  {
    std::lock_guard lock(mutex_);
    commands.swap(commands_);
  }
  for (Command &c : commands) {
    switch (c.kind) {
      case Command::Kind::query:
        if (rank_ == 0)
          start_gather(0, c.id, c.seq, c.tag);
        else
          send(links_[0], {ctl::MsgType::query, c.id, c.seq, 0, {}, {}, c.tag});
        break;
      case Command::Kind::notice:
        // Sent before recorded, as in handle(): another thread's collective could otherwise
        // return on it and the program exit first.
        if (rank_ == 0)
          forward_notice(c.seq, c.id, c.text, nullptr);
        else
          send(links_[0], {ctl::MsgType::notice, c.id, c.seq, 0, c.text, {}});
        record_notice(c.seq, c.id, c.text);
        {
          std::lock_guard lock(mutex_);
          ++notices_sent_;
        }
        changed_.notify_all();
        break;
      case Command::Kind::leave:
        if (rank_ == 0)
          self_left_ = true;
        else
          send(links_[0], {ctl::MsgType::leave, 0, 0, 0, {}, {}});
        break;
    }
  }
}

void ControlPlane::pump(Link &link) {
  uint8_t buf[16 * 1024];
  std::string closed;  // why the connection ended, if it did
  std::string error;
  // The frames of each chunk are handled before the next is read, so a peer that keeps
  // writing cannot grow the input without bound. The frames a peer sent before it exited come
  // first: its last one is often the notice that explains the exit (the kernel keeps them
  // readable even after a reset).
  auto handle_frames = [&] {
    while (link.state != Link::State::gone) {
      std::optional<ctl::Message> m = link.in.next(&error);
      if (!m) break;
      handle(link, std::move(*m));
    }
    return link.state != Link::State::gone && error.empty();
  };
  for (;;) {
    bs::IoResult io = bs::recv_some(link.fd.get(), buf, sizeof buf);
    if (io.state == bs::IoState::again) break;
    if (io.state != bs::IoState::ok) {
      closed = bs::describe(io);
      break;
    }
    link.in.feed({buf, io.bytes});
    if (!handle_frames() || io.bytes < sizeof buf) break;
  }
  if (link.state == Link::State::gone) return;
  if (!error.empty()) {
    log(LogLevel::warn, "control plane: rank ", link.rank, " sent an invalid frame: ", error);
    lose(link, "it sent an invalid control frame: " + error);
  } else if (!closed.empty()) {
    lose(link, closed);
  }
}

void ControlPlane::handle(Link &link, ctl::Message &&m) {
  using ctl::MsgType;
  const auto invalid = [&] {
    lose(link, cat("it sent an unexpected ", ctl::msg_type_name(static_cast<uint32_t>(m.type)),
                   " message"));
  };
  if (rank_ != 0) {
    switch (m.type) {
      case MsgType::ask:
        send(link,
             {MsgType::answer, m.id, 0, 0, {}, {ctl::from_lookup(rank_, lookup(m.seq, m.tag))}});
        return;
      case MsgType::report:
        deliver(m.id, std::move(m.answers));
        return;
      case MsgType::died:
        record_failure(static_cast<int>(m.rank), m.text);
        return;
      case MsgType::notice:
        record_notice(m.seq, m.id, m.text);
        return;
      case MsgType::bye: {
        std::lock_guard lock(mutex_);
        done_ = true;
        changed_.notify_all();
        return;
      }
      default:
        return invalid();
    }
  }
  switch (m.type) {
    case MsgType::query:
      if (link.state != Link::State::live && link.state != Link::State::left) return;
      start_gather(link.rank, m.id, m.seq, m.tag);
      return;
    case MsgType::answer: {
      auto it = gathers_.find(m.id);
      if (it == gathers_.end() || !it->second.pending[link.rank]) return;  // late: dropped
      ctl::RankAnswer a = std::move(m.answers[0]);
      a.rank = link.rank;  // a rank speaks only for itself
      // A rank in finalize will never enter what it has not entered yet.
      if (link.state == Link::State::left && a.state == ctl::RankAnswer::State::not_entered)
        a.state = ctl::RankAnswer::State::left;
      it->second.answers[link.rank] = std::move(a);
      it->second.pending[link.rank] = false;
      if (--it->second.missing == 0) finish_gather(m.id);
      return;
    }
    case MsgType::notice:
      // Forward before recording: once recorded, this process's collective may return the
      // mismatch and the program exit, and a notice still unsent would be lost to the others
      // (seen: rank 1 of 3 reported "rank 0 failed" after rank 2's notice reached rank 0).
      forward_notice(m.seq, m.id, m.text, &link);
      record_notice(m.seq, m.id, m.text);
      return;
    case MsgType::leave:
      link.state = Link::State::left;
      return;
    default:
      return invalid();
  }
}

void ControlPlane::send(Link &link, const ctl::Message &m) {
  if (link.state == Link::State::gone) return;
  const std::vector<uint8_t> frame = ctl::encode_frame(m);
  bs::IoResult io =
      bs::send_all(link.fd.get(), frame.data(), frame.size(), bs::Deadline::after(kSendSeconds));
  if (io.state != bs::IoState::ok) lose(link, cat("sending to it failed: ", bs::describe(io)));
}

void ControlPlane::lose(Link &link, const std::string &why) {
  const bool was_left = link.state == Link::State::left;
  link.state = Link::State::gone;
  link.fd.reset();
  if (rank_ != 0) {
    bool clean;
    {
      std::lock_guard lock(mutex_);
      clean = done_;
      root_gone_ = true;
      changed_.notify_all();
    }
    if (!clean)
      record_failure(0, cat("rank 0 failed: its process on ", link.host,
                            " exited or was killed (the connection to it closed: ", why, ")"));
    std::lock_guard lock(mutex_);
    done_ = true;  // nothing more can be learned without rank 0
    changed_.notify_all();
    return;
  }
  // Answers it owed are now known: it has failed (or is finalizing). By id, because finishing
  // a gather sends, and a failed send may come back here.
  std::vector<uint64_t> ids;
  for (const auto &entry : gathers_) ids.push_back(entry.first);
  for (uint64_t id : ids) {
    auto it = gathers_.find(id);
    if (it == gathers_.end()) continue;
    Gather &g = it->second;
    if (g.requester == link.rank) {
      gathers_.erase(it);
    } else if (g.pending[link.rank]) {
      g.pending[link.rank] = false;
      g.answers[link.rank].state =
          was_left ? ctl::RankAnswer::State::left : ctl::RankAnswer::State::failed;
      if (--g.missing == 0) finish_gather(id);
    }
  }
  if (was_left) return;  // it finalized; closing early is its business
  const std::string text =
      cat("rank ", link.rank, " failed: its process on ", link.host,
          " exited or was killed (its connection to rank 0 closed: ", why, ")");
  // The others hear of it before this process's callers do: a program that exits on its error
  // would otherwise take the news with it, and the others would name rank 0 instead. Claimed
  // first, so that a send failing meanwhile does not make its rank the one named.
  const bool first = claim_failure(link.rank, text);
  for (Link &other : links_)
    if (other.state != Link::State::gone)
      send(other, {ctl::MsgType::died, 0, 0, static_cast<uint32_t>(link.rank), text, {}});
  if (first) publish_failure();
}

void ControlPlane::start_gather(int requester, uint64_t request_id, uint64_t seq, uint64_t tag) {
  const uint64_t id = next_gather_++;
  Gather g;
  g.requester = requester;
  g.request_id = request_id;
  g.seq = seq;
  g.tag = tag;
  g.answers.resize(size_);
  g.pending.assign(size_, false);
  g.deadline = bs::Deadline::after(kGatherSeconds);
  g.answers[0] = ctl::from_lookup(0, lookup(seq, tag));
  if (self_left_ && g.answers[0].state == ctl::RankAnswer::State::not_entered)
    g.answers[0].state = ctl::RankAnswer::State::left;
  for (int r = 1; r < size_; ++r) {
    g.answers[r].rank = r;
    Link &l = *link_of(r);
    if (l.state == Link::State::gone) {
      g.answers[r].state = ctl::RankAnswer::State::failed;
    } else {
      g.pending[r] = true;
      ++g.missing;
    }
  }
  gathers_.emplace(id, std::move(g));
  // Ask after registering: a send that fails resolves the gather through lose().
  for (int r = 1; r < size_; ++r) {
    auto it = gathers_.find(id);
    if (it == gathers_.end()) return;
    if (it->second.pending[r]) send(*link_of(r), {ctl::MsgType::ask, id, seq, 0, {}, {}, tag});
  }
  auto it = gathers_.find(id);
  if (it != gathers_.end() && it->second.missing == 0) finish_gather(id);
}

void ControlPlane::finish_gather(uint64_t id) {
  auto it = gathers_.find(id);
  if (it == gathers_.end()) return;
  Gather g = std::move(it->second);
  gathers_.erase(it);
  if (g.requester == 0) return deliver(g.request_id, std::move(g.answers));
  Link &l = *link_of(g.requester);
  send(l, {ctl::MsgType::report, g.request_id, 0, 0, {}, std::move(g.answers)});
}

void ControlPlane::expire_gathers() {
  std::vector<uint64_t> expired;
  for (auto &[id, g] : gathers_)
    if (g.deadline.expired()) {
      for (int r = 0; r < size_; ++r)
        if (g.pending[r]) g.answers[r].state = ctl::RankAnswer::State::silent;
      expired.push_back(id);
    }
  for (uint64_t id : expired) finish_gather(id);
}

void ControlPlane::check_everyone_left() {
  if (rank_ != 0 || !self_left_) return;
  for (const Link &l : links_)
    if (l.state == Link::State::live) return;
  for (Link &l : links_)
    if (l.state == Link::State::left) send(l, {ctl::MsgType::bye, 0, 0, 0, {}, {}});
  std::lock_guard lock(mutex_);
  done_ = true;
  changed_.notify_all();
}

void ControlPlane::deliver(uint64_t request_id, std::vector<ctl::RankAnswer> answers) {
  std::lock_guard lock(mutex_);
  // A report that comes after its query gave up has nobody to read it.
  if (!waiting_.contains(request_id)) return;
  results_[request_id] = std::move(answers);
  changed_.notify_all();
}

bool ControlPlane::claim_failure(int rank, const std::string &text) {
  std::lock_guard lock(mutex_);
  if (failed_rank_ >= 0) return false;
  failed_rank_ = rank;
  failure_text_ = text;
  return true;
}

void ControlPlane::publish_failure() {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    text = failure_text_;
    changed_.notify_all();
  }
  failed_.store(true, std::memory_order_release);
  log(LogLevel::warn, text);
}

void ControlPlane::record_failure(int rank, const std::string &text) {
  if (claim_failure(rank, text)) publish_failure();
}

void ControlPlane::record_notice(uint64_t seq, uint64_t tag, const std::string &text) {
  {
    std::lock_guard lock(mutex_);
    if (!notices_.emplace(std::make_pair(seq, tag), text).second) return;
    notice_order_.emplace_back(seq, tag);
    log(LogLevel::info, "control plane: notice about call #", key_seq(seq), " of context ",
        key_context(seq), ": ", text);
    // Only the recent past matters: a notice is for collectives still in flight. The oldest
    // goes, not the smallest key: a new notice of the world (context 0) must not be the one.
    while (notices_.size() > kNoticesKept) {
      notices_.erase(notice_order_.front());
      notice_order_.pop_front();
    }
  }
  notices_gen_.fetch_add(1, std::memory_order_acq_rel);
}

void ControlPlane::forward_notice(uint64_t seq, uint64_t tag, const std::string &text,
                                  const Link *except) {
  for (Link &l : links_)
    if (&l != except && l.state != Link::State::gone)
      send(l, {ctl::MsgType::notice, tag, seq, 0, text, {}});
}

ControlPlane::Link *ControlPlane::link_of(int rank) {
  return rank_ == 0 ? &links_[rank - 1] : &links_[0];
}

}  // namespace braid::detail
