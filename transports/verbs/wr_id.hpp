// wr_id encodes what a work request was for, so a completion is dispatched in O(1) without a
// lookup table: [kind:4][class:4][connection:24][slot:32].
//   Recv        slot = receive buffer index in the class's arena (per-peer arenas: peer-major)
//   SendBounce  slot = send bounce buffer index in the class's pool
//   SendInline  slot = send-queue slots its completion frees: itself and the unsignaled inline
//               sends posted before it (selective signalling, send.cpp)
//   Read        slot = index of the receive request in the request table
#pragma once

#include <cstdint>

namespace braid::verbs {

enum class WrKind : uint8_t { Recv = 1, SendBounce = 2, SendInline = 3, Read = 4 };

struct WrId {
  WrKind kind;
  uint8_t klass;
  uint32_t conn;  // connection index: peer * classes + class
  uint32_t slot;
};

constexpr uint32_t kMaxConnections = 1u << 24;

inline uint64_t encode_wr_id(WrKind kind, uint8_t klass, uint32_t conn, uint32_t slot) {
  return (uint64_t{static_cast<uint8_t>(kind)} << 60) | (uint64_t{klass & 0xfu} << 56) |
         (uint64_t{conn & 0xffffffu} << 32) | slot;
}

inline WrId decode_wr_id(uint64_t id) {
  return WrId{static_cast<WrKind>(id >> 60), static_cast<uint8_t>((id >> 56) & 0xf),
              static_cast<uint32_t>((id >> 32) & 0xffffff), static_cast<uint32_t>(id)};
}

inline const char *wr_kind_name(WrKind kind) {
  switch (kind) {
    case WrKind::Recv:
      return "receive";
    case WrKind::SendBounce:
      return "send";
    case WrKind::SendInline:
      return "inline send";
    case WrKind::Read:
      return "RDMA READ";
  }
  return "unknown work request";
}

}  // namespace braid::verbs
