// The control plane's wire format: after the job has formed, the bootstrap's connections to
// rank 0 carry these frames (the bootstrap frame header of bootstrap/wire.hpp, with the types
// below and seq 0). Everything is decoded as hostile input: a peer that sends a frame that
// does not decode is treated as a failed peer, never trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bootstrap/wire.hpp"
#include "control/call_log.hpp"

namespace braid::detail::ctl {

enum class MsgType : uint32_t {
  query = 16,   // rank -> 0: what did every rank call as #seq? {id, seq}
  ask = 17,     // 0 -> rank: what did you call as #seq? {id, seq}
  answer = 18,  // rank -> 0: {id, RankAnswer}
  report = 19,  // 0 -> rank: the answer to its query {id, RankAnswer per rank}
  died = 20,    // 0 -> rank: rank R failed {rank, text}
  notice = 21,  // both ways: ranks disagreed about #seq {seq, tag (id), text}
  leave = 22,   // rank -> 0: finalize reached (empty)
  bye = 23,     // 0 -> rank: every rank has left or failed (empty)
};
const char *msg_type_name(uint32_t type);

inline constexpr size_t kMaxAlgorithmBytes = 64;
inline constexpr size_t kMaxTextBytes = 4096;
// A rank's answer on the wire: fixed part + algorithm name.
inline constexpr size_t kAnswerFixedBytes = 4 + 1 + 8 + 8 + 4 + 8 + 4 + 4 + 4 + 1;
inline constexpr size_t kMaxAnswerBytes = kAnswerFixedBytes + kMaxAlgorithmBytes;
// The largest frame a job of `size` ranks can legitimately send (a report).
inline uint64_t max_payload(int size) {
  return 8 + 4 + static_cast<uint64_t>(size) * kMaxAnswerBytes + kMaxTextBytes;
}

// One rank's state for a query: its CallLookup, or what rank 0 knows instead.
struct RankAnswer {
  enum class State : uint8_t {
    entered = 1,
    not_entered = 2,
    forgotten = 3,
    failed = 4,  // the rank's process is gone
    left = 5,    // it is in finalize
    silent = 6,  // it did not answer in time
  };
  int rank = 0;
  State state = State::silent;
  uint64_t entered = 0;
  CallSignature sig;

  bool operator==(const RankAnswer &) const = default;
};
RankAnswer from_lookup(int rank, const CallLookup &lookup);

struct Message {
  MsgType type = MsgType::leave;
  uint64_t id = 0;                  // query, ask, answer, report; notice: the communicator's tag
  uint64_t seq = 0;                 // query, ask, notice
  uint32_t rank = 0;                // died
  std::string text;                 // died, notice
  std::vector<RankAnswer> answers;  // answer (one), report (one per rank)
  uint64_t tag = 0;                 // query, ask: the communicator's tag (Comm::tag)

  bool operator==(const Message &) const = default;
};

std::vector<uint8_t> encode_payload(const Message &m);
// Full frame: header + payload.
std::vector<uint8_t> encode_frame(const Message &m);
// Decodes a payload of the given frame type for a job of `size` ranks. nullopt (with *why set)
// when the bytes are not a valid message: wrong length, rank out of range, unknown state...
std::optional<Message> decode_payload(uint32_t type, std::span<const uint8_t> payload, int size,
                                      std::string *why);

// Splits a byte stream into control frames. Bytes are fed as they arrive; frames come out
// whole. A header with an unknown type or an oversized length poisons the stream (the peer is
// then treated as failed): nothing is allocated on a length before it has been checked.
class FrameAssembler {
 public:
  explicit FrameAssembler(int size) : size_(size) {}
  void feed(std::span<const uint8_t> bytes);
  // The next complete message, if any. On a protocol violation returns nullopt and sets
  // *error (and keeps returning the same error).
  std::optional<Message> next(std::string *error);
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  int size_;
  std::vector<uint8_t> buffer_;
  size_t start_ = 0;
  std::string error_;
};

}  // namespace braid::detail::ctl
