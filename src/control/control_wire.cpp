#include "control/control_wire.hpp"

#include <cstring>

#include "error.hpp"

namespace braid::detail::ctl {
namespace {

class Writer {
 public:
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  // The reader refuses text that is not printable ASCII (or a newline), so what is not is
  // written as '?': a reason from strerror in the application's locale ("zurückgesetzt") would
  // otherwise make every receiver take the message for garbage from a broken peer.
  void text(const std::string &s, size_t max) {
    const size_t n = std::min(s.size(), max);
    u32(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      out.push_back((c >= 0x20 && c <= 0x7e) || c == '\n' ? c : static_cast<uint8_t>('?'));
    }
  }
  std::vector<uint8_t> out;
};

// Every read checks the bytes left first; a short input makes ok false and reads zeros.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}
  bool take(size_t n) {
    if (!ok || in_.size() - at_ < n) {
      ok = false;
      return false;
    }
    return true;
  }
  uint8_t u8() { return take(1) ? in_[at_++] : 0; }
  uint32_t u32() {
    if (!take(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(in_[at_++]) << (8 * i);
    return v;
  }
  uint64_t u64() {
    if (!take(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(in_[at_++]) << (8 * i);
    return v;
  }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  std::string text(size_t max) {
    const uint32_t n = u32();
    if (n > max) ok = false;
    if (!ok || !take(n)) return {};
    std::string s(reinterpret_cast<const char *>(in_.data() + at_), n);
    at_ += n;
    return s;
  }
  bool done() const { return ok && at_ == in_.size(); }
  bool ok = true;

 private:
  std::span<const uint8_t> in_;
  size_t at_ = 0;
};

void put_answer(Writer &w, const RankAnswer &a) {
  w.u32(static_cast<uint32_t>(a.rank));
  w.u8(static_cast<uint8_t>(a.state));
  w.u64(a.entered);
  w.u64(a.sig.seq);
  w.u32(a.sig.kind);
  w.u64(a.sig.count);
  w.i32(a.sig.dtype);
  w.i32(a.sig.op);
  w.i32(a.sig.root);
  const size_t n = std::min(a.sig.algorithm.size(), kMaxAlgorithmBytes);
  w.u8(static_cast<uint8_t>(n));
  w.out.insert(w.out.end(), a.sig.algorithm.begin(),
               a.sig.algorithm.begin() + static_cast<std::ptrdiff_t>(n));
}

bool printable(const std::string &s) {
  for (char c : s)
    if ((c < 0x20 || c > 0x7e) && c != '\n') return false;
  return true;
}

bool get_answer(Reader &r, int size, RankAnswer *a, std::string *why) {
  const uint32_t rank = r.u32();
  const uint8_t state = r.u8();
  a->entered = r.u64();
  a->sig.seq = r.u64();
  a->sig.kind = r.u32();
  a->sig.count = r.u64();
  a->sig.dtype = r.i32();
  a->sig.op = r.i32();
  a->sig.root = r.i32();
  const uint8_t n = r.u8();
  if (!r.ok) return (*why = "truncated answer", false);
  if (rank >= static_cast<uint32_t>(size))
    return (*why = cat("answer for rank ", rank, " in a job of ", size), false);
  if (state < 1 || state > 6) return (*why = cat("answer state ", unsigned{state}), false);
  if (n > kMaxAlgorithmBytes || !r.take(n))
    return (*why = cat("algorithm name of ", unsigned{n}, " bytes"), false);
  std::string alg(n, '\0');
  for (auto &c : alg) c = static_cast<char>(r.u8());
  if (!printable(alg)) return (*why = "algorithm name is not printable", false);
  a->rank = static_cast<int>(rank);
  a->state = static_cast<RankAnswer::State>(state);
  a->sig.algorithm = std::move(alg);
  return true;
}

}  // namespace

const char *msg_type_name(uint32_t type) {
  switch (static_cast<MsgType>(type)) {
    case MsgType::query:
      return "query";
    case MsgType::ask:
      return "ask";
    case MsgType::answer:
      return "answer";
    case MsgType::report:
      return "report";
    case MsgType::died:
      return "died";
    case MsgType::notice:
      return "notice";
    case MsgType::leave:
      return "leave";
    case MsgType::bye:
      return "bye";
  }
  return "unknown";
}

RankAnswer from_lookup(int rank, const CallLookup &lookup) {
  RankAnswer a;
  a.rank = rank;
  a.state = static_cast<RankAnswer::State>(lookup.state);
  a.entered = lookup.entered;
  a.sig = lookup.sig;
  return a;
}

std::vector<uint8_t> encode_payload(const Message &m) {
  Writer w;
  switch (m.type) {
    case MsgType::query:
    case MsgType::ask:
      w.u64(m.id);
      w.u64(m.seq);
      w.u64(m.tag);
      break;
    case MsgType::answer:
      w.u64(m.id);
      put_answer(w, m.answers.at(0));
      break;
    case MsgType::report:
      w.u64(m.id);
      w.u32(static_cast<uint32_t>(m.answers.size()));
      for (const RankAnswer &a : m.answers) put_answer(w, a);
      break;
    case MsgType::died:
      w.u32(m.rank);
      w.text(m.text, kMaxTextBytes);
      break;
    case MsgType::notice:
      w.u64(m.seq);
      w.u64(m.id);
      w.text(m.text, kMaxTextBytes);
      break;
    case MsgType::leave:
    case MsgType::bye:
      break;
  }
  return std::move(w.out);
}

std::vector<uint8_t> encode_frame(const Message &m) {
  const std::vector<uint8_t> payload = encode_payload(m);
  const bs::HeaderBytes head =
      bs::encode_header({static_cast<uint32_t>(m.type), 0, payload.size()});
  // Sized once and filled in place: growing the vector trips GCC 12's false -Warray-bounds.
  std::vector<uint8_t> out(head.size() + payload.size());
  std::memcpy(out.data(), head.data(), head.size());
  if (!payload.empty()) std::memcpy(out.data() + head.size(), payload.data(), payload.size());
  return out;
}

std::optional<Message> decode_payload(uint32_t type, std::span<const uint8_t> payload, int size,
                                      std::string *why) {
  Reader r(payload);
  Message m;
  m.type = static_cast<MsgType>(type);
  switch (m.type) {
    case MsgType::query:
    case MsgType::ask:
      m.id = r.u64();
      m.seq = r.u64();
      m.tag = r.u64();
      break;
    case MsgType::answer: {
      m.id = r.u64();
      RankAnswer a;
      if (!get_answer(r, size, &a, why)) return std::nullopt;
      // A rank answers for itself: that it failed, left or was silent only rank 0 can say.
      if (a.state != RankAnswer::State::entered && a.state != RankAnswer::State::not_entered &&
          a.state != RankAnswer::State::forgotten) {
        *why = cat("answer of rank ", a.rank, " claims state ", static_cast<unsigned>(a.state));
        return std::nullopt;
      }
      m.answers.push_back(std::move(a));
      break;
    }
    case MsgType::report: {
      m.id = r.u64();
      const uint32_t n = r.u32();
      if (r.ok && n != static_cast<uint32_t>(size)) {
        *why = cat("report with ", n, " answers in a job of ", size);
        return std::nullopt;
      }
      for (uint32_t i = 0; i < n && r.ok; ++i) {
        RankAnswer a;
        if (!get_answer(r, size, &a, why)) return std::nullopt;
        if (a.rank != static_cast<int>(i)) {  // read by position (rank) where it is used
          *why = cat("report's answer ", i, " is for rank ", a.rank);
          return std::nullopt;
        }
        m.answers.push_back(std::move(a));
      }
      break;
    }
    case MsgType::died:
      m.rank = r.u32();
      m.text = r.text(kMaxTextBytes);
      if (r.ok && m.rank >= static_cast<uint32_t>(size)) {
        *why = cat("failure of rank ", m.rank, " in a job of ", size);
        return std::nullopt;
      }
      break;
    case MsgType::notice:
      m.seq = r.u64();
      m.id = r.u64();
      m.text = r.text(kMaxTextBytes);
      break;
    case MsgType::leave:
    case MsgType::bye:
      break;
    default:
      *why = cat("unknown control message type ", type);
      return std::nullopt;
  }
  if (!r.done()) {
    *why = cat(msg_type_name(type), " message of ", payload.size(), " bytes is malformed");
    return std::nullopt;
  }
  if (!printable(m.text)) {
    *why = cat(msg_type_name(type), " message text is not printable");
    return std::nullopt;
  }
  return m;
}

void FrameAssembler::feed(std::span<const uint8_t> bytes) {
  if (!error_.empty()) return;
  // Compact before growing, so a long-lived stream does not keep consumed bytes.
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  } else if (start_ > 64 * 1024) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

std::optional<Message> FrameAssembler::next(std::string *error) {
  if (!error_.empty()) {
    *error = error_;
    return std::nullopt;
  }
  const size_t have = buffer_.size() - start_;
  if (have < bs::kFrameHeaderBytes) return std::nullopt;
  bs::HeaderBytes head;
  std::memcpy(head.data(), buffer_.data() + start_, head.size());
  const bs::FrameHeader h = bs::decode_header(head);
  if (h.type < static_cast<uint32_t>(MsgType::query) ||
      h.type > static_cast<uint32_t>(MsgType::bye))
    error_ = cat("control frame of unknown type ", h.type);
  else if (h.seq != 0)
    error_ = cat("control frame with sequence number ", h.seq);
  else if (h.length > max_payload(size_))
    error_ = cat(msg_type_name(h.type), " frame of ", h.length, " bytes exceeds the limit of ",
                 max_payload(size_));
  if (!error_.empty()) {
    *error = error_;
    return std::nullopt;
  }
  if (have - bs::kFrameHeaderBytes < h.length) return std::nullopt;
  const std::span<const uint8_t> payload(buffer_.data() + start_ + bs::kFrameHeaderBytes,
                                         static_cast<size_t>(h.length));
  std::string why;
  std::optional<Message> m = decode_payload(h.type, payload, size_, &why);
  if (!m) {
    error_ = why;
    *error = error_;
    return std::nullopt;
  }
  start_ += bs::kFrameHeaderBytes + static_cast<size_t>(h.length);
  return m;
}

}  // namespace braid::detail::ctl
