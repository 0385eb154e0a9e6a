// The bootstrap wire format. Everything rank 0 reads comes from a socket anyone can connect
// to, so every decoder here treats its input as hostile: lengths are bounded before anything
// is allocated, and the decoders report why input was refused instead of trusting it.
//
// Handshake, client -> rank 0, the first bytes on a connection (integers little-endian):
//   magic "BRAIDBS1" | version u32 | rank u32 | size u32 | key length u32 | key |
//   hostname length u32 | hostname
// Rank 0 answers with one Reply byte. After acceptance, rank 0 sends a hosts frame (seq 0)
// once every rank has joined; that frame is what tells a rank the job has formed.
//
// Frames after the handshake: type u32 | seq u32 | length u64 | payload.
#pragma once

#include <braid/braid.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace braid::detail::bs {

inline constexpr std::array<char, 8> kMagic = {'B', 'R', 'A', 'I', 'D', 'B', 'S', '1'};
inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kMaxKeyBytes = 256;
inline constexpr size_t kMaxHostBytes = 256;
// Large enough for size*bytes of any sane bootstrap allgather (endpoint addresses), small
// enough that a hostile header cannot make anyone allocate or wait for unbounded data.
inline constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 30;
inline constexpr size_t kMaxErrorTextBytes = 4096;
inline constexpr size_t kHelloFixedBytes = 8 + 4 * 4;  // magic, version, rank, size, key length
inline constexpr size_t kMaxHelloBytes = kHelloFixedBytes + kMaxKeyBytes + 4 + kMaxHostBytes;
inline constexpr size_t kFrameHeaderBytes = 16;

struct Hello {
  uint32_t version = kProtocolVersion;
  uint32_t rank = 0;
  uint32_t size = 0;
  std::string key;
  std::string host;
};

std::vector<uint8_t> encode_hello(const Hello &hello);

struct HelloParse {
  enum class State { incomplete, complete, invalid };
  State state = State::incomplete;
  Hello hello;          // complete only
  size_t consumed = 0;  // complete only: bytes the hello occupied
  std::string reason;   // invalid only: why, for the log
};

// Parses a hello from the bytes received so far. Refuses as early as possible (bad magic after
// 8 bytes, oversized lengths as soon as they arrive) so garbage costs rank 0 nothing. Checks
// the format only; whether rank, size and key fit the job is the caller's business.
HelloParse parse_hello(std::span<const uint8_t> bytes);

// Rank 0's one-byte answer to a hello. Distinct refusal codes let a misconfigured rank say
// why it was refused instead of just "rejected".
enum class Reply : uint8_t {
  accepted = 'A',
  bad_protocol = 'P',
  bad_key = 'K',
  bad_size = 'S',
  bad_rank = 'R',
  duplicate_rank = 'D',
};
std::string describe_reply(uint8_t reply);

// Compares job keys in time independent of their contents, so a client cannot learn the key a
// byte at a time from how quickly it is refused.
bool keys_equal(std::string_view a, std::string_view b);

enum class FrameType : uint32_t {
  allgather = 1,  // a rank's contribution to an allgather, to rank 0
  barrier = 2,    // a rank's arrival at a barrier, to rank 0 (empty)
  result = 3,     // the concatenated allgather/barrier result, from rank 0
  error = 4,      // the collective failed: u32 braid_result_t + message, from rank 0
  hosts = 5,      // the job formed: every rank's hostname, from rank 0
};
const char *frame_type_name(uint32_t type);

struct FrameHeader {
  uint32_t type = 0;
  uint32_t seq = 0;
  uint64_t length = 0;
};
using HeaderBytes = std::array<uint8_t, kFrameHeaderBytes>;

HeaderBytes encode_header(const FrameHeader &header);
FrameHeader decode_header(const HeaderBytes &bytes);
// "" if the header has one of the allowed types, sequence number seq and a length within
// kMaxPayloadBytes; otherwise a description of what is wrong.
std::string check_header(const FrameHeader &header, std::initializer_list<FrameType> allowed,
                         uint32_t seq);

// Hosts frame payload: for each rank, u32 length + hostname.
std::vector<uint8_t> encode_hosts(const std::vector<std::string> &hosts);
std::optional<std::vector<std::string>> decode_hosts(std::span<const uint8_t> bytes, size_t count);
inline constexpr uint64_t max_hosts_payload(size_t count) {
  return count * (4 + kMaxHostBytes);
}

// Error frame payload: u32 result code + message text.
struct ErrorReport {
  braid_result_t code = BRAID_ERR_INTERNAL;
  std::string message;
};
std::vector<uint8_t> encode_error(braid_result_t code, std::string_view message);
std::optional<ErrorReport> decode_error(std::span<const uint8_t> bytes);
inline constexpr uint64_t kMaxErrorPayload = 4 + kMaxErrorTextBytes;

// "" if a hostname is acceptable (1..kMaxHostBytes printable, non-space ASCII bytes: it ends
// up in logs), otherwise why not.
std::string check_hostname(std::string_view host);

}  // namespace braid::detail::bs
