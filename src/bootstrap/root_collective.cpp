// Rank 0's side of a bootstrap collective. Contributions are received from all ranks at once
// under one poll, so a timeout names exactly the ranks that have not arrived, and a rank that
// sends a mismatched contribution is drained rather than left half-read, which keeps every
// connection in step so the job survives a mismatch.
#include <algorithm>
#include <cstring>

#include "bootstrap/collective.hpp"
#include "bootstrap/frame_io.hpp"
#include "bootstrap/text.hpp"
#include "error.hpp"

namespace braid::detail::bs {
namespace {

struct Incoming {
  HeaderBytes head{};
  size_t head_got = 0;
  bool have_header = false;
  uint64_t remaining = 0;
  uint8_t *dest = nullptr;  // nullptr: a mismatched contribution, read and dropped
  bool done = false;
};

class RootCollective {
 public:
  RootCollective(Star &star, const CollectiveCall &call)
      : star_(star), call_(call), incoming_(call.size) {}

  void run() {
    if (call_.bytes > 0) std::memmove(call_.out, call_.in, call_.bytes);
    gather();
    for (const std::string &m : mismatch_)
      if (!m.empty()) {
        // Everyone has been fully read and nobody has been sent anything: the connections
        // are still in step, so report and let the job carry on.
        report_error(all_fds(), call_.seq, BRAID_ERR_MISMATCH, m, false);
        fail(BRAID_ERR_MISMATCH, m);
      }
    distribute();
  }

 private:
  void gather() {
    const Deadline deadline = Deadline::after(call_.timeout_s);
    incoming_[0].done = true;
    mismatch_.resize(call_.size);
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<int> ranks;
      for (int r = 1; r < call_.size; ++r)
        if (!incoming_[r].done) {
          fds.push_back({star_.to_rank[r].get(), POLLIN, 0});
          ranks.push_back(r);
        }
      if (ranks.empty()) return;
      if (poll_until(fds, deadline) == 0)
        abort(BRAID_ERR_TIMEOUT, cat(call_.op, "timed out after ", call_.timeout_s,
                                     " s waiting for ", rank_list(ranks)));
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents != 0) pump(ranks[i]);
    }
  }

  // Reads whatever rank r has sent so far, up to the end of its contribution.
  void pump(int r) {
    Incoming &in = incoming_[r];
    const int fd = star_.to_rank[r].get();
    while (!in.done) {
      IoResult io;
      if (!in.have_header) {
        io = recv_some(fd, in.head.data() + in.head_got, in.head.size() - in.head_got);
        in.head_got += io.bytes;
        if (in.head_got == in.head.size()) start_payload(r);
      } else {
        uint8_t *into = in.dest ? in.dest : discard_;
        size_t want = in.dest ? in.remaining : std::min<uint64_t>(in.remaining, sizeof discard_);
        io = recv_some(fd, into, want);
        in.remaining -= io.bytes;
        if (in.dest) in.dest += io.bytes;
        in.done = in.remaining == 0;
      }
      if (io.state == IoState::again) return;
      if (io.state != IoState::ok)
        abort(BRAID_ERR_PEER_FAILED,
              cat(call_.op, "lost connection to rank ", r, ": ", describe(io)));
    }
  }

  void start_payload(int r) {
    Incoming &in = incoming_[r];
    FrameHeader h = decode_header(in.head);
    std::string why = check_header(h, {FrameType::allgather, FrameType::barrier}, call_.seq);
    if (why.empty() && h.type == static_cast<uint32_t>(FrameType::barrier) && h.length != 0)
      why = cat("barrier frame with ", h.length, " bytes of payload");
    if (!why.empty())
      abort(BRAID_ERR_PEER_FAILED, cat(call_.op, "rank ", r, " sent an invalid frame: ", why));
    const uint32_t kind = static_cast<uint32_t>(call_.kind);
    if (h.type != kind)
      mismatch_[r] = cat("bootstrap: rank ", r, " called ", frame_type_name(h.type),
                         " but rank 0 called ", frame_type_name(kind));
    else if (h.length != call_.bytes)
      mismatch_[r] = cat(call_.op, "rank ", r, " passed ", h.length, " bytes but rank 0 passed ",
                         call_.bytes, " bytes");
    in.have_header = true;
    in.remaining = h.length;
    in.dest = mismatch_[r].empty() ? static_cast<uint8_t *>(call_.out) + r * call_.bytes : nullptr;
    in.done = in.remaining == 0;
  }

  // Sends the result to each rank in turn. Blocking per rank is safe: every rank has sent its
  // contribution and is now only reading.
  void distribute() {
    const uint64_t total = static_cast<uint64_t>(call_.size) * call_.bytes;
    const FrameHeader header{static_cast<uint32_t>(FrameType::result), call_.seq, total};
    const Deadline deadline = Deadline::after(call_.timeout_s);
    for (int r = 1; r < call_.size; ++r) {
      IoResult io = send_frame(star_.to_rank[r].get(), header, call_.out, deadline);
      if (io.state == IoState::ok) continue;
      LinkContext ctx = LinkContext::collective(call_.op, r, call_.timeout_s);
      Failure failure = link_failure(io, ctx);
      // Ranks before r already have this result: they hear of the failure at their next call.
      // Rank r may hold a partial frame, so it gets nothing more.
      std::vector<int> served, waiting;
      for (int q = 1; q < call_.size; ++q)
        if (q != r) (q < r ? served : waiting).push_back(star_.to_rank[q].get());
      report_error(served, call_.seq + 1, failure.code(), failure.message(), true);
      report_error(waiting, call_.seq, failure.code(), failure.message(), true);
      throw failure;
    }
  }

  [[noreturn]] void abort(braid_result_t code, const std::string &message) {
    report_error(all_fds(), call_.seq, code, message, true);
    fail(code, message);
  }

  std::vector<int> all_fds() const {
    std::vector<int> fds;
    for (int r = 1; r < call_.size; ++r) fds.push_back(star_.to_rank[r].get());
    return fds;
  }

  Star &star_;
  const CollectiveCall &call_;
  std::vector<Incoming> incoming_;
  std::vector<std::string> mismatch_;
  uint8_t discard_[64 * 1024];
};

}  // namespace

void root_collective(Star &star, const CollectiveCall &call) {
  RootCollective(star, call).run();
}

}  // namespace braid::detail::bs
