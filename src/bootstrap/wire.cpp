#include "bootstrap/wire.hpp"

#include <algorithm>
#include <cstring>

#include "error.hpp"

namespace braid::detail::bs {
namespace {

// Byte-wise little-endian so the format does not depend on the host's byte order.
void put_u32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void put_bytes(std::vector<uint8_t> &out, std::string_view s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

HelloParse invalid(std::string reason) {
  HelloParse p;
  p.state = HelloParse::State::invalid;
  p.reason = std::move(reason);
  return p;
}

}  // namespace

std::vector<uint8_t> encode_hello(const Hello &hello) {
  std::vector<uint8_t> out(kMagic.begin(), kMagic.end());
  put_u32(out, hello.version);
  put_u32(out, hello.rank);
  put_u32(out, hello.size);
  put_bytes(out, hello.key);
  put_bytes(out, hello.host);
  return out;
}

HelloParse parse_hello(std::span<const uint8_t> bytes) {
  const size_t n = bytes.size();
  const uint8_t *p = bytes.data();
  // Check the magic against however much of it has arrived, so garbage is refused at once.
  if (n > 0 && std::memcmp(p, kMagic.data(), std::min(n, kMagic.size())) != 0)
    return invalid("bad magic (not a braid bootstrap client)");
  if (n < kHelloFixedBytes) return {};
  uint32_t version = get_u32(p + 8);
  if (version != kProtocolVersion)
    return invalid(cat("protocol version ", version, ", expected ", kProtocolVersion));
  uint32_t key_len = get_u32(p + 20);
  if (key_len > kMaxKeyBytes)
    return invalid(cat("key length ", key_len, " exceeds ", kMaxKeyBytes));
  const size_t host_len_at = kHelloFixedBytes + key_len;
  if (n < host_len_at + 4) return {};
  uint32_t host_len = get_u32(p + host_len_at);
  if (host_len > kMaxHostBytes)
    return invalid(cat("hostname length ", host_len, " exceeds ", kMaxHostBytes));
  const size_t total = host_len_at + 4 + host_len;
  if (n < total) return {};

  HelloParse out;
  out.hello.version = version;
  out.hello.rank = get_u32(p + 12);
  out.hello.size = get_u32(p + 16);
  out.hello.key.assign(reinterpret_cast<const char *>(p + kHelloFixedBytes), key_len);
  out.hello.host.assign(reinterpret_cast<const char *>(p + host_len_at + 4), host_len);
  if (std::string why = check_hostname(out.hello.host); !why.empty()) return invalid(why);
  out.state = HelloParse::State::complete;
  out.consumed = total;
  return out;
}

std::string describe_reply(uint8_t reply) {
  switch (static_cast<Reply>(reply)) {
    case Reply::accepted:
      return "accepted";
    case Reply::bad_protocol:
      return "handshake format or protocol version not understood";
    case Reply::bad_key:
      return "job key does not match (check BRAID_JOB_KEY)";
    case Reply::bad_size:
      return "job size does not match rank 0's (check BRAID_SIZE, or braid_comm_init_rank's "
             "nranks)";
    case Reply::bad_rank:
      return "rank out of range for the job (check BRAID_RANK)";
    case Reply::duplicate_rank:
      return "another process already joined with this rank (check BRAID_RANK)";
  }
  return cat("unknown reply byte ", static_cast<unsigned>(reply));
}

bool keys_equal(std::string_view a, std::string_view b) {
  // Visit a fixed-size window whatever the keys hold and fold every difference in, so the
  // time taken does not depend on where (or whether) the keys differ.
  // Bitwise, not logical: no branch on which test failed.
  unsigned diff = static_cast<unsigned>(a.size() != b.size()) |
                  static_cast<unsigned>(a.size() > kMaxKeyBytes) |
                  static_cast<unsigned>(b.size() > kMaxKeyBytes);
  for (size_t i = 0; i < kMaxKeyBytes; ++i) {
    unsigned x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0u;
    unsigned y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0u;
    diff |= x ^ y;
  }
  return diff == 0;
}

const char *frame_type_name(uint32_t type) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::allgather:
      return "allgather";
    case FrameType::barrier:
      return "barrier";
    case FrameType::result:
      return "result";
    case FrameType::error:
      return "error";
    case FrameType::hosts:
      return "hosts";
  }
  return "unknown";
}

HeaderBytes encode_header(const FrameHeader &header) {
  HeaderBytes out{};
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(header.type >> (8 * i));
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<uint8_t>(header.seq >> (8 * i));
  for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<uint8_t>(header.length >> (8 * i));
  return out;
}

FrameHeader decode_header(const HeaderBytes &bytes) {
  return {get_u32(bytes.data()), get_u32(bytes.data() + 4), get_u64(bytes.data() + 8)};
}

std::string check_header(const FrameHeader &header, std::initializer_list<FrameType> allowed,
                         uint32_t seq) {
  bool type_ok = std::any_of(allowed.begin(), allowed.end(),
                             [&](FrameType t) { return static_cast<uint32_t>(t) == header.type; });
  if (!type_ok) {
    std::string want;
    for (FrameType t : allowed)
      want += cat(want.empty() ? "" : " or ", frame_type_name(static_cast<uint32_t>(t)));
    return cat("frame type ", header.type, " (", frame_type_name(header.type), "), expected ",
               want);
  }
  if (header.seq != seq) return cat("sequence number ", header.seq, ", expected ", seq);
  if (header.length > kMaxPayloadBytes)
    return cat("payload length ", header.length, " exceeds the limit of ", kMaxPayloadBytes);
  return "";
}

std::vector<uint8_t> encode_hosts(const std::vector<std::string> &hosts) {
  std::vector<uint8_t> out;
  for (const std::string &h : hosts) put_bytes(out, h);
  return out;
}

std::optional<std::vector<std::string>> decode_hosts(std::span<const uint8_t> bytes, size_t count) {
  std::vector<std::string> hosts;
  size_t at = 0;
  for (size_t i = 0; i < count; ++i) {
    if (bytes.size() - at < 4) return std::nullopt;
    uint32_t len = get_u32(bytes.data() + at);
    at += 4;
    if (len > kMaxHostBytes || bytes.size() - at < len) return std::nullopt;
    hosts.emplace_back(reinterpret_cast<const char *>(bytes.data() + at), len);
    at += len;
    if (!check_hostname(hosts.back()).empty()) return std::nullopt;
  }
  if (at != bytes.size()) return std::nullopt;
  return hosts;
}

std::vector<uint8_t> encode_error(braid_result_t code, std::string_view message) {
  message = message.substr(0, kMaxErrorTextBytes);
  // Sized once and filled in place: growing the vector here trips GCC 12's false
  // -Wstringop-overflow at -O3.
  std::vector<uint8_t> out(4 + message.size());
  const auto c = static_cast<uint32_t>(code);
  for (size_t i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(c >> (8 * i));
  if (!message.empty()) std::memcpy(out.data() + 4, message.data(), message.size());
  return out;
}

std::optional<ErrorReport> decode_error(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4 || bytes.size() > kMaxErrorPayload) return std::nullopt;
  uint32_t code = get_u32(bytes.data());
  if (code == 0 || code > static_cast<uint32_t>(BRAID_ERR_INTERNAL)) return std::nullopt;
  ErrorReport report;
  report.code = static_cast<braid_result_t>(code);
  report.message.assign(reinterpret_cast<const char *>(bytes.data() + 4), bytes.size() - 4);
  return report;
}

std::string check_hostname(std::string_view host) {
  if (host.empty()) return "empty hostname";
  if (host.size() > kMaxHostBytes)
    return cat("hostname length ", host.size(), " exceeds ", kMaxHostBytes);
  for (char c : host)
    if (c < 0x21 || c > 0x7e) return "hostname contains a non-printable byte";
  return "";
}

}  // namespace braid::detail::bs
