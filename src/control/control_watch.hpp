// ControlWatch: the engine's PeerWatch answered over the control plane, and the wording of
// what it finds ("rank 0 passed 100 elements, rank 1 passed 200").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "control/control_plane.hpp"
#include "engine/collective.hpp"
#include "engine/peer_watch.hpp"

namespace braid::detail {

// One per communicator: it asks about the communicator's calls (by context id) and speaks of
// its ranks (communicator ranks, not world ranks) in what it reports.
class ControlWatch final : public coll::PeerWatch {
 public:
  // `members`: the world rank of every communicator rank; `me`: this rank's communicator rank;
  // `tag`: what tells the communicator apart from others with its context id (Comm::tag).
  ControlWatch(ControlPlane &control, uint32_t context, uint64_t tag, std::vector<int> members,
               int me)
      : control_(control), context_(context), tag_(tag), members_(std::move(members)), me_(me) {}
  bool peer_failed() const noexcept override { return control_.failed(); }
  std::string peer_failure() const override { return control_.failure_text(); }
  int failed_rank() const override { return control_.failed_rank(); }
  uint64_t notice_generation() const noexcept override { return control_.notice_generation(); }
  std::optional<std::string> notice_for(uint64_t seq) const override {
    return control_.notice_for(call_key(context_, seq), tag_);
  }
  std::vector<std::pair<uint64_t, std::string>> notices() const override;
  void announce(uint64_t seq, const std::string &text) override {
    control_.announce(call_key(context_, seq), tag_, text);
  }
  std::optional<Failure> diagnose(const coll::CallLabel &label, bool timed_out) override;

 private:
  ControlPlane &control_;
  uint32_t context_;
  uint64_t tag_;
  std::vector<int> members_;
  int me_;
};

// The differences between rank `me`'s call and the others' that entered the same collective,
// one "rank A passed X, rank B passed Y" per disagreeing rank; empty when all agree.
std::vector<std::string> call_differences(int me, const std::vector<ctl::RankAnswer> &answers);
// "allreduce #7" (or "call #7" for a kind this build does not know).
std::string call_name(const CallSignature &sig);

}  // namespace braid::detail
