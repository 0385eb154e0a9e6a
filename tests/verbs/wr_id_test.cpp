// wr_id round trips every field at its limits, so completions dispatch to the right place.
#include <gtest/gtest.h>

#include "wr_id.hpp"

namespace braid::verbs {
namespace {

TEST(WrId, RoundTripsEveryKindAtItsLimits) {
  for (WrKind kind : {WrKind::Recv, WrKind::SendBounce, WrKind::SendInline, WrKind::Read}) {
    for (uint8_t klass : {0, 7, 15}) {
      for (uint32_t conn : {0u, 12345u, kMaxConnections - 1}) {
        for (uint32_t slot : {0u, 99u, UINT32_MAX}) {
          WrId id = decode_wr_id(encode_wr_id(kind, klass, conn, slot));
          EXPECT_EQ(id.kind, kind);
          EXPECT_EQ(id.klass, klass);
          EXPECT_EQ(id.conn, conn);
          EXPECT_EQ(id.slot, slot);
        }
      }
    }
  }
  EXPECT_STREQ(wr_kind_name(WrKind::Read), "RDMA READ");
}

}  // namespace
}  // namespace braid::verbs
