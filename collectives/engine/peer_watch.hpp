// PeerWatch: what the engine asks about the other ranks when the data transport alone cannot
// say what is wrong. Implemented over the control plane (src/control); the engine only sees
// this interface. peer_failed() is read on every progress pass, so it must be one atomic load;
// everything else runs only when a collective is already stalled or failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"

namespace braid::coll {

struct CallLabel;

class PeerWatch {
 public:
  virtual ~PeerWatch() = default;
  // A rank's process is known to be gone.
  virtual bool peer_failed() const noexcept = 0;
  // Which rank (-1 before any failure).
  virtual int failed_rank() const = 0;
  // Describes that failure: "rank 2 failed: ...".
  virtual std::string peer_failure() const = 0;
  // Changes whenever another rank reports that the ranks disagreed about some collective.
  virtual uint64_t notice_generation() const noexcept = 0;
  virtual std::optional<std::string> notice_for(uint64_t seq) const = 0;
  // Every notice still remembered: (sequence number, text).
  virtual std::vector<std::pair<uint64_t, std::string>> notices() const = 0;
  // Tells every rank that the ranks disagree about call #seq (`text` says how); returns once
  // it is on its way, so a rank that exits right after its error has told the others.
  virtual void announce(uint64_t seq, const std::string &text) = 0;
  // Asks every rank about collective `label` (blocks briefly). Returns the failure that
  // explains why it cannot complete: MISMATCH naming both sides when the ranks called
  // different things, PEER_FAILED when a rank is gone, and, when `timed_out`, TIMEOUT naming
  // the ranks that had not entered it. nullopt when nothing explains it (yet).
  virtual std::optional<detail::Failure> diagnose(const CallLabel &label, bool timed_out) = 0;
};

}  // namespace braid::coll
