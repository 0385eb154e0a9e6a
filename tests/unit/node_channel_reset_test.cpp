// A communicator whose region comes back warm from the node's pool (node/node_pool.hpp) holds
// the last communicator's bytes, maybe one of another size: NodeChannel::place_controls with
// `reset` must zero every control line, inline slot and call slot the new channel reads before
// anyone writes it, all of which lie before its first window, and leave the windows alone
// (every read of a window waits for its flag).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "intranode/node_channel.hpp"
#include "node/node_map.hpp"

namespace braid::coll {
namespace {

TEST(NodeChannelReset, AWarmRegionsLinesStartFromZerosWhateverSizeUsedItLast) {
  constexpr int kLargest = 4;
  const size_t bytes = NodeChannel::segment_bytes(kLargest);
  std::unique_ptr<char, decltype(&std::free)> base(
      static_cast<char *>(std::aligned_alloc(4096, bytes)), &std::free);
  for (int n = 2; n <= kLargest; ++n) {
    std::memset(base.get(), 0xff, bytes);  // the last communicator's bytes, any of them
    NodeChannel::place_controls(base.get(), n, -1, true);
    const detail::NodeMap map = detail::make_node_map(std::vector<std::string>(n, "host"), 0);
    NodeChannel ch(base.get(), map);
    const char *first_window = ch.buffer(0, 0);
    // Everything the channel keeps outside its windows lies before the first one.
    for (int local = 0; local < n; ++local) {
      const auto *slot =
          reinterpret_cast<const char *>(&ch.inline_slot(local, NodeChannel::kBuffers - 1));
      EXPECT_LE(slot + sizeof(InlineSlot), first_window) << n << " ranks, rank " << local;
      const auto *call = reinterpret_cast<const char *>(&ch.call_slot(local, kCallSlots - 1));
      EXPECT_LE(call + sizeof(CallSlot), first_window) << n << " ranks, rank " << local;
      EXPECT_EQ(ch.pid(local), 0) << n << " ranks, rank " << local;
    }
    const auto zeroed = static_cast<size_t>(first_window - base.get());
    const std::vector<char> zeros(zeroed, 0);
    EXPECT_EQ(std::memcmp(base.get(), zeros.data(), zeroed), 0) << n << " ranks";
    EXPECT_EQ(static_cast<unsigned char>(*first_window), 0xffu)
        << n << " ranks: the windows are left as they were";
  }
}

}  // namespace
}  // namespace braid::coll
