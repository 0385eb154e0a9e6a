// BRAID_VERBS_RECV_QUEUES: the receive side as a list of size classes, in the spirit of Open MPI's
// btl_openib_receive_queues. Grammar (no spaces):
//   spec  := class (':' class)*
//   class := ('P' | 'S') ',' bytes ',' count
// P = a receive queue per peer (credit flow control), S = one shared receive queue (SRQ).
// Classes must be listed in strictly increasing buffer size: a sender picks the smallest class
// whose buffers hold the message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace braid::verbs {

enum class QueueKind : uint8_t { PerPeer, Shared };

struct QueueSpec {
  QueueKind kind = QueueKind::Shared;
  uint32_t bytes = 0;  // size of each receive buffer, header included
  uint32_t count = 0;  // buffers posted per peer (P) or in the SRQ (S)
};

constexpr size_t kMaxQueueClasses = 8;
constexpr uint32_t kMinQueueBytes = 128;       // room for the largest control message
constexpr uint32_t kMaxQueueBytes = 1u << 20;  // eager buffers beyond 1 MiB only waste memory
constexpr uint32_t kMinPerPeerCount = 4;       // credit messages reserve 2 of them
constexpr uint32_t kMaxQueueCount = 1u << 16;

// The default, chosen by measurement (docs/verbs.md, "How the default was chosen again"): shared
// queues only. A per-peer class's credit window (count - 2 messages) stalls a one-way stream of
// small messages once the link's round trip exceeds the time to send that many, and its memory
// grows with every peer; shared queues have neither cost and refill on SRQ limit events.
constexpr std::string_view kDefaultRecvQueues = "S,4096,256:S,65536,64";

// Parses `text`; on failure returns false with a message naming the offending class and why.
bool parse_recv_queues(std::string_view text, std::vector<QueueSpec> *out, std::string *error);

std::string format_recv_queues(const std::vector<QueueSpec> &spec);

}  // namespace braid::verbs
