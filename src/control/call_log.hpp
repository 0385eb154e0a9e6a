// CallLog: what this rank's collectives were called with, published for the control plane.
// The application thread writes one slot per collective (a handful of relaxed atomic stores,
// no lock, no system call); the control-plane thread reads it to answer "what did you call as
// collective #N?" even while the application thread is stuck in the transport or elsewhere.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace braid::detail {

// One collective call as the ranks must agree on it.
struct CallSignature {
  uint64_t seq = 0;
  uint32_t kind = 0;  // coll::CollKind
  uint64_t count = 0;
  int32_t dtype = 0;
  int32_t op = 0;
  int32_t root = 0;
  std::string algorithm;  // as selected on this rank ("" when nothing is sent, e.g. count 0)

  bool operator==(const CallSignature &) const = default;
};

// What a rank says about collective #seq.
struct CallLookup {
  enum class State : uint8_t {
    entered = 1,      // sig is its call #seq
    not_entered = 2,  // it has not called #seq yet; sig is its latest call (if entered > 0)
    forgotten = 3,    // #seq is too old to be remembered
  };
  State state = State::not_entered;
  uint64_t entered = 0;  // how many collectives the rank had entered
  CallSignature sig;
};

// The control plane names a call by a key that holds its communicator's context id above the
// communicator's own sequence number, so one control plane serves every communicator.
inline constexpr unsigned kCallKeySeqBits = 40;
inline uint64_t call_key(uint32_t context, uint64_t seq) {
  return (static_cast<uint64_t>(context) << kCallKeySeqBits) |
         (seq & ((uint64_t{1} << kCallKeySeqBits) - 1));
}
inline uint32_t key_context(uint64_t key) {
  return static_cast<uint32_t>(key >> kCallKeySeqBits);
}
inline uint64_t key_seq(uint64_t key) {
  return key & ((uint64_t{1} << kCallKeySeqBits) - 1);
}

class CallLog {
 public:
  // Recent calls kept; far more than can be in flight at once.
  static constexpr size_t kSlots = 256;

  // Application thread only, in sequence order (seq == number of calls published so far).
  void publish(uint64_t seq, uint32_t kind, uint64_t count, int32_t dtype, int32_t op, int32_t root,
               const char *algorithm);
  // Any thread.
  CallLookup lookup(uint64_t seq) const;
  uint64_t entered() const { return entered_.load(std::memory_order_acquire); }

 private:
  // Every field is atomic so a reader racing the writer sees torn data at worst, which the
  // stamp check (a seqlock) then discards; nothing here is a data race.
  struct Slot {
    std::atomic<uint64_t> stamp{0};  // seq + 1 once complete; 0 while being written
    std::atomic<uint32_t> kind{0};
    std::atomic<uint64_t> count{0};
    std::atomic<int32_t> dtype{0};
    std::atomic<int32_t> op{0};
    std::atomic<int32_t> root{0};
    std::atomic<const char *> algorithm{nullptr};  // static strings only
  };
  bool read(uint64_t seq, CallSignature *out) const;

  std::array<Slot, kSlots> slots_;
  std::atomic<uint64_t> entered_{0};
};

}  // namespace braid::detail
