// Collective: one running collective call, driven step by step. advance() never blocks: it
// tests the outstanding messages and, when what the algorithm awaits has arrived, resumes it.
#pragma once

#include <braid/braid.h>

#include <memory>
#include <string>

#include "engine/coll_args.hpp"
#include "engine/coll_context.hpp"
#include "engine/task.hpp"

namespace braid::coll {

// What names a call in its errors, e.g. "rank 0: allreduce #7 (ring, 4 ranks, 4096 bytes)".
// Kept as data and formatted only when an error needs it: the hot path formats nothing.
struct CallLabel {
  CollKind kind = CollKind::allreduce;
  uint64_t seq = 0;
  const char *algorithm = "";
  int rank = 0;
  int size = 0;
  size_t bytes = 0;
  std::string str() const;
};

class Collective {
 public:
  Collective(detail::Transport &transport, ScratchPool &scratch, int rank, int size,
             uint64_t tag_base, double timeout_s, CallLabel label, AlgorithmFn algorithm,
             CollArgs args, NodeChannel *node = nullptr, const int *members = nullptr);
  Collective(const Collective &) = delete;
  Collective &operator=(const Collective &) = delete;

  // Returns true once finished (successfully or not). Never throws. Sets *progressed when a
  // message completed or the algorithm moved on, so waiters know whether to back off.
  bool advance(bool *progressed);
  // Ends the collective with a failure that is not tied to one of its messages.
  // `failed_peer`: a transport rank whose process is gone (its messages are abandoned, not
  // cancelled).
  void abort(braid_result_t result, const std::string &why, int failed_peer = -1);
  // Replaces the outcome of a finished collective with a better explanation of its failure.
  void rewrite(braid_result_t result, std::string message) {
    result_ = result;
    message_ = std::move(message);
  }
  bool finished() const { return finished_; }
  // Its first step has run (Scheduler::start may hold a call back before that).
  bool started() const { return started_; }
  // Set when the failure was decided from what the other ranks said (not seen on the data
  // path), so it needs no further diagnosis.
  void mark_explained() { explained_ = true; }
  bool explained() const { return explained_; }
  // The failure is a disagreement this rank saw in full (detail::Disagreement).
  bool disagreement() const { return disagreement_; }
  braid_result_t result() const { return result_; }
  const std::string &message() const { return message_; }
  const CallLabel &label() const { return label_; }
  // What the algorithm is blocked on, for the scheduler's choice of how to sleep.
  const FlagWait *blocked_on_flag() const { return finished_ ? nullptr : ctx_.blocked_on_flag(); }
  bool has_messages() const { return !finished_ && ctx_.has_messages(); }
  // Whether it waits on nothing but one flag marked long that a sleeper can wait on.
  bool blocked_long() const { return !finished_ && ctx_.blocked_long(); }

 private:
  void finish(braid_result_t result, std::string message, int failed_peer = -1);

  CallLabel label_;
  // BRAID_AVG: the result this rank holds, divided by the rank count once the sum is complete.
  void *average_buf_ = nullptr;
  size_t average_count_ = 0;
  braid_dtype_t average_dtype_ = BRAID_FLOAT32;
  CollContext ctx_;
  Task task_;
  bool started_ = false;
  bool finished_ = false;
  bool explained_ = false;
  bool disagreement_ = false;
  braid_result_t result_ = BRAID_SUCCESS;
  std::string message_;
};

}  // namespace braid::coll
