// The control plane: the bootstrap's star of TCP connections kept open after init, served by
// one thread per rank. It is how braid learns what the data transport cannot tell it:
//  - that a rank's process is gone (rank 0 sees its connection close without a clean leave
//    and tells every rank; every rank sees its own connection close when rank 0 is gone);
//  - what each rank called as collective #N (answered from the CallLog by the thread, so a
//    rank stuck in the transport or in application code still answers), which turns hangs
//    and garbled messages into named mismatches and timeouts into lists of absent ranks;
//  - when every rank has reached finalize (the leave/bye exchange replaces a barrier).
// Nothing here is on the data path: the application thread only publishes to the CallLog and
// reads one atomic flag per progress pass; it talks to the thread only when something is
// already wrong (or at finalize).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/rendezvous.hpp"
#include "control/call_log.hpp"
#include "control/control_wire.hpp"

namespace braid::detail {

class ControlPlane {
 public:
  // Takes over the job's bootstrap connections (star.to_root on ranks > 0, star.to_rank on
  // rank 0) and starts the service thread (none for a 1-rank job).
  ControlPlane(bs::Star star, int rank, int size);
  ControlPlane(const ControlPlane &) = delete;
  ControlPlane &operator=(const ControlPlane &) = delete;
  // Stops the thread. Without leave() first, the other ranks see this rank as failed.
  ~ControlPlane();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Communicators' call logs, by context id: what the control thread answers from. A call is
  // named by call_key(context, seq) everywhere below; a context this rank does not know (not a
  // member, not created yet, freed, or now another communicator's: `tag`, Comm::tag, tells
  // them apart) answers "not entered".
  void attach(uint32_t context, uint64_t tag, const CallLog *log);
  // Only `log`'s attachment: the context id may already serve a newer communicator.
  void detach(uint32_t context, const CallLog *log);

  // True once some rank's process is known to be gone. One atomic load.
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  // What failed() refers to: "rank 2 failed: ..." (empty before).
  std::string failure_text() const;
  int failed_rank() const;

  // Every rank's answer about collective `seq` (a call key), indexed by world rank; nullopt when
  // the control plane cannot answer within timeout_s (rank 0 gone, this rank leaving).
  std::optional<std::vector<ctl::RankAnswer>> query(uint64_t seq, uint64_t tag, double timeout_s);

  // Tells every rank that the ranks disagreed about #seq (so ranks still waiting in it fail
  // at once rather than at their own suspicion check). `tag` names the communicator beyond its
  // context id (CommTag): disjoint communicators share ids, and a freed one's id is reused. Returns
  // once the notice has been written to the control connections (or after timeout_s): a rank that
  // exits right after its error must not leave the others to see only that it is gone.
  void announce(uint64_t seq, uint64_t tag, const std::string &text, double timeout_s = 1.0);
  // Bumped at every notice received; cheap to poll.
  uint64_t notice_generation() const noexcept {
    return notices_gen_.load(std::memory_order_acquire);
  }
  std::optional<std::string> notice_for(uint64_t seq, uint64_t tag) const;
  // Every notice kept, for communicator `tag`: (call key, text).
  std::vector<std::pair<uint64_t, std::string>> notices(uint64_t tag) const;

  // Finalize: tells rank 0 this rank is done and waits (up to timeout_s) until every rank has
  // left or failed. Returns "" or why it stopped waiting.
  std::string leave(double timeout_s) {
    start_leave();
    return wait_left(timeout_s);
  }
  // The two halves of leave(), for a process that leaves several jobs at once (braid_finalize
  // with unique-id groups): each job's other ranks may be leaving them in another order, or be
  // this very process, so it says it leaves every one of them before it waits for any.
  void start_leave();
  std::string wait_left(double timeout_s);

 private:
  struct Link {
    bs::Fd fd;
    int rank = 0;
    std::string host;
    ctl::FrameAssembler in;
    enum class State { live, left, gone } state = State::live;
  };
  struct Command {
    enum class Kind { query, notice, leave } kind;
    uint64_t id = 0;  // query: the request; notice: the communicator's tag
    uint64_t seq = 0;
    std::string text;
    uint64_t tag = 0;  // query: the communicator's tag
  };
  struct Gather {
    int requester = 0;
    uint64_t request_id = 0;
    uint64_t seq = 0;
    uint64_t tag = 0;
    std::vector<ctl::RankAnswer> answers;
    std::vector<bool> pending;
    int missing = 0;
    bs::Deadline deadline;
  };

  void run();
  void run_commands();
  void pump(Link &link);
  void handle(Link &link, ctl::Message &&m);
  void send(Link &link, const ctl::Message &m);
  void lose(Link &link, const std::string &why);
  void start_gather(int requester, uint64_t request_id, uint64_t seq, uint64_t tag);
  void finish_gather(uint64_t id);
  void expire_gathers();
  void check_everyone_left();
  void deliver(uint64_t request_id, std::vector<ctl::RankAnswer> answers);
  // The first failure is the one every error names. claim_failure takes that place without
  // telling this process's callers yet (false: another failure had it); publish_failure tells
  // them. record_failure does both.
  bool claim_failure(int rank, const std::string &text);
  void publish_failure();
  void record_failure(int rank, const std::string &text);
  void record_notice(uint64_t seq, uint64_t tag, const std::string &text);
  void forward_notice(uint64_t seq, uint64_t tag, const std::string &text, const Link *except);
  Link *link_of(int rank);
  void wake();

  const int rank_;
  const int size_;
  // What this rank says about call `key` of the communicator `tag`: not entered when its
  // context id now belongs to another communicator (freed and reused), or to none yet.
  CallLookup lookup(uint64_t key, uint64_t tag) const;
  mutable std::mutex logs_mutex_;
  struct Attached {
    uint64_t tag;  // the communicator's (Comm::tag): a context id is reused after a free
    const CallLog *log;
  };
  std::map<uint32_t, Attached> logs_;
  std::vector<Link> links_;  // rank 0: ranks 1..size-1; others: rank 0 only
  int wake_fd_ = -1;

  // Thread-only state.
  std::map<uint64_t, Gather> gathers_;
  uint64_t next_gather_ = 1;
  bool self_left_ = false;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::vector<Command> commands_;
  std::map<uint64_t, std::vector<ctl::RankAnswer>> results_;
  std::set<uint64_t> waiting_;  // queries still waiting for their results
  std::map<std::pair<uint64_t, uint64_t>, std::string> notices_;  // by (call key, tag)
  std::deque<std::pair<uint64_t, uint64_t>> notice_order_;        // its keys, oldest first
  static constexpr size_t kNoticesKept = 64;
  std::string failure_text_;
  int failed_rank_ = -1;
  uint64_t next_request_ = 1;
  uint64_t notices_queued_ = 0;  // notices handed to the thread
  uint64_t notices_sent_ = 0;    // ... and written by it
  bool done_ = false;            // bye received/sent, or rank 0 gone: the thread has ended
  bool root_gone_ = false;       // ranks > 0: the connection to rank 0 is lost
  bool stop_ = false;

  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> notices_gen_{0};
  std::thread thread_;
};

}  // namespace braid::detail
