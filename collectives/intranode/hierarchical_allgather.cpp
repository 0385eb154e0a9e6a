// Allgather across nodes: each node gathers its ranks' blocks in shared memory to its leader,
// packed node by node; the leaders exchange their nodes' packs with a ring allgatherv; each
// leader hands the whole result to its node by a node-local broadcast. One pack per node
// crosses the network per step instead of one block per rank. When the communicator's ranks
// are numbered node by node (the usual launch), the packs are recvbuf's own layout and nothing
// is copied twice; otherwise they go through scratch and are put in rank order at the end.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "allgather/algorithms.hpp"
#include "intranode/call_check.hpp"
#include "intranode/hierarchical_algorithms.hpp"
#include "intranode/node_phases.hpp"
#include "intranode/node_windows.hpp"
#include "intranode/segment_pipeline.hpp"

namespace braid::coll {
namespace {

// Rank r's block in the packed layout: its node's pack, then its place on its node.
struct Packing {
  std::vector<size_t> node_first;  // elements before each node's pack
  std::vector<size_t> node_count;  // elements in each node's pack
  bool in_rank_order = true;       // rank r's packed place is r * count

  Packing(const detail::NodeMap &m, size_t count) {
    std::vector<size_t> ranks(static_cast<size_t>(m.nodes), 0);
    for (int node : m.node_of) ++ranks[static_cast<size_t>(node)];
    size_t at = 0;
    for (size_t j = 0; j < ranks.size(); ++j) {
      node_first.push_back(at);
      node_count.push_back(ranks[j] * count);
      at += ranks[j] * count;
    }
    for (size_t r = 0; r < m.node_of.size(); ++r)
      in_rank_order = in_rank_order && place(m, static_cast<int>(r), count) == r * count;
  }
  size_t place(const detail::NodeMap &m, int r, size_t count) const {
    return node_first[static_cast<size_t>(m.node_of[static_cast<size_t>(r)])] +
           static_cast<size_t>(m.local_index[static_cast<size_t>(r)]) * count;
  }
};

}  // namespace

Task allgather_hierarchical(CollContext &ctx, CollArgs args) {
  NodeChannel &ch = node_channel(ctx, "allgather hierarchical");
  const uint32_t ticket = ch.take_turn();
  co_await ctx.wait_flag(ch.turn(ticket));
  Turn turn(ch);
  co_await agree_on_call(ctx, ch, ticket, args);
  const detail::NodeMap &m = ch.map();
  const size_t es = args.elem_size, block = args.bytes();
  const size_t total = block * m.node_of.size();
  const Packing pack(m, args.count);
  auto lease = ctx.scratch(pack.in_rank_order ? 0 : total);
  char *packed = pack.in_rank_order ? static_cast<char *>(args.recvbuf) : lease.data();
  const auto *send = static_cast<const char *>(args.sendbuf);
  char *node_pack = packed + pack.node_first[static_cast<size_t>(m.node)] * es;

  // 1. The node's blocks into its leader's pack, in local order.
  const int me = m.local_rank;
  if (me == 0 && node_pack != send) std::memcpy(node_pack, send, block);
  constexpr size_t piece = NodeChannel::kWindow;
  auto len = [&](uint32_t k) { return std::min(piece, block - k * piece); };
  // A local, not a temporary in the co_await: GCC 12 destroys such temporaries twice.
  std::vector<int> sources;
  if (me == 0) sources = all_local(ch);
  co_await node_windows(
      ctx, ch, windows_for(block, piece), me != 0, std::move(sources),
      [&](uint32_t k, char *buf) { std::memcpy(buf, send + k * piece, len(k)); },
      [&](uint32_t k, auto buffer_of) {
        for (int s = 1; s < ch.size(); ++s)
          std::memcpy(node_pack + static_cast<size_t>(s) * block + k * piece, buffer_of(s), len(k));
      });

  // 2. The leaders exchange their packs (in place in `packed`).
  if (m.leader() && m.nodes > 1) {
    CollArgs inner = args;
    inner.kind = CollKind::allgatherv;
    inner.sendbuf = node_pack;
    inner.recvbuf = packed;
    inner.count = pack.node_count[static_cast<size_t>(m.node)];
    inner.counts = pack.node_count.data();
    inner.displs = pack.node_first.data();
    co_await among_group(ctx, m.leaders.data(), m.nodes, m.node, allgatherv_ring, inner);
  }

  // 3. The whole result to every rank of the node; 4. in rank order where it was packed.
  co_await node_broadcast(ctx, ch, packed, total, 0);
  if (pack.in_rank_order) co_return;
  auto *recv = static_cast<char *>(args.recvbuf);
  for (size_t r = 0; r < m.node_of.size(); ++r)
    std::memcpy(recv + r * block, packed + pack.place(m, static_cast<int>(r), args.count) * es,
                block);
}

}  // namespace braid::coll
