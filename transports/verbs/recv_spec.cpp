#include "recv_spec.hpp"

#include <charconv>

namespace braid::verbs {
namespace {

bool parse_number(std::string_view field, uint64_t limit, uint32_t *out) {
  if (field.empty() || field.size() > 10) return false;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || value > limit) return false;
  *out = static_cast<uint32_t>(value);
  return true;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

bool fail(std::string *error, std::string_view item, const std::string &why) {
  *error = "BRAID_VERBS_RECV_QUEUES: class '" + std::string(item) + "': " + why +
           " (expected e.g. P,4096,32:S,65536,64)";
  return false;
}

}  // namespace

bool parse_recv_queues(std::string_view text, std::vector<QueueSpec> *out, std::string *error) {
  out->clear();
  if (text.empty()) {
    *error = "BRAID_VERBS_RECV_QUEUES is empty (expected e.g. P,4096,32:S,65536,64)";
    return false;
  }
  for (std::string_view item : split(text, ':')) {
    std::vector<std::string_view> fields = split(item, ',');
    if (fields.size() != 3) return fail(error, item, "needs exactly 3 fields: kind,bytes,count");
    QueueSpec q;
    if (fields[0] == "P") {
      q.kind = QueueKind::PerPeer;
    } else if (fields[0] == "S") {
      q.kind = QueueKind::Shared;
    } else {
      return fail(error, item, "kind must be P (per peer) or S (shared)");
    }
    if (!parse_number(fields[1], kMaxQueueBytes, &q.bytes) || q.bytes < kMinQueueBytes)
      return fail(error, item,
                  "bytes must be a number from " + std::to_string(kMinQueueBytes) + " to " +
                      std::to_string(kMaxQueueBytes));
    uint32_t min_count = q.kind == QueueKind::PerPeer ? kMinPerPeerCount : 1;
    if (!parse_number(fields[2], kMaxQueueCount, &q.count) || q.count < min_count)
      return fail(error, item,
                  "count must be a number from " + std::to_string(min_count) + " to " +
                      std::to_string(kMaxQueueCount));
    if (!out->empty() && q.bytes <= out->back().bytes)
      return fail(error, item, "classes must be listed in strictly increasing buffer size");
    if (out->size() == kMaxQueueClasses)
      return fail(error, item, "at most " + std::to_string(kMaxQueueClasses) + " classes");
    out->push_back(q);
  }
  return true;
}

std::string format_recv_queues(const std::vector<QueueSpec> &spec) {
  std::string text;
  for (const QueueSpec &q : spec) {
    if (!text.empty()) text += ':';
    text += q.kind == QueueKind::PerPeer ? "P," : "S,";
    text += std::to_string(q.bytes) + "," + std::to_string(q.count);
  }
  return text;
}

}  // namespace braid::verbs
