#include "intranode/tiny_calls.hpp"

#include <algorithm>
#include <cstring>

#include "engine/v_counts.hpp"
#include "intranode/node_windows.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

constexpr size_t kRoom = sizeof(CallSlot::data);

size_t local_root(const NodeChannel &ch, const CollArgs &args) {
  return static_cast<size_t>(ch.map().local_index[args.root]);
}

// A scatter root's record carries the others' blocks, without its own, where they lie
// contiguous in its send buffer: when its own block is the first or the last (on 2 ranks
// always; 8 KiB blocks then fit). Otherwise it carries every block. Where the root's record
// starts in its send buffer and how many blocks it carries; the same on every rank.
struct ScatterRecord {
  size_t skip = 0;    // bytes of sendbuf before the record's first block
  size_t blocks = 0;  // blocks in the record
};
ScatterRecord scatter_record(const NodeChannel &ch, const CollArgs &args) {
  const auto n = static_cast<size_t>(ch.size());
  const auto root_at = static_cast<size_t>(ch.world_rank(static_cast<int>(local_root(ch, args))));
  const size_t bytes = args.bytes();
  if (root_at == 0) return {bytes, n - 1};
  return {0, root_at == n - 1 ? n - 1 : n};
}

// out = in(0) op in(1) op ... in local rank order, the lowest rank's data on the left:
// identical bits on every rank.
template <typename In>
void combine(const NodeChannel &ch, const CollArgs &args, void *out, size_t count, In in) {
  reduce(out, in(0), in(1), count, args.dtype, args.op);
  for (int s = 2; s < ch.size(); ++s) reduce(out, out, in(s), count, args.dtype, args.op);
}

bool with_counts(size_t n) {
  return (1 + n) * sizeof(uint64_t) <= kRoom;
}
size_t allgatherv_head_bytes(size_t n) {
  return (with_counts(n) ? 1 + n : 1) * sizeof(uint64_t);
}

// alltoallv: [largest send block][packed bytes or kNotPacked][sendcounts][recvcounts].
constexpr uint64_t kNotPacked = ~uint64_t{0};
bool alltoallv_counts(size_t n) {
  return (2 + 2 * n) * sizeof(uint64_t) <= kRoom;
}

// The alltoallv record: its head, then this rank's blocks for the others, in rank order, when
// they all fit.
TinyPlan stage_alltoallv(const NodeChannel &ch, const CollArgs &args, uint64_t *stage) {
  const auto n = static_cast<size_t>(ch.size());
  const size_t es = args.elem_size, head = alltoallv_head_bytes(n);
  auto out_bytes = [&](int d) { return args.counts[static_cast<size_t>(ch.world_rank(d))] * es; };
  uint64_t largest = 0, total = 0;
  for (int d = 0; d < ch.size(); ++d) {
    largest = std::max<uint64_t>(largest, out_bytes(d));
    if (d != ch.me()) total += out_bytes(d);  // its own block it copies from sendbuf
  }
  const bool packed = alltoallv_counts(n) && total <= kRoom - head;
  stage[0] = largest;
  stage[1] = packed ? total : kNotPacked;
  for (size_t r = 0; alltoallv_counts(n) && r < n; ++r) {
    stage[2 + r] = args.counts[r];
    stage[2 + n + r] = args.recv_counts[r];
  }
  char *at = reinterpret_cast<char *>(stage) + head;
  const auto *send = static_cast<const char *>(args.sendbuf);
  for (int d = 0; packed && d < ch.size(); ++d) {
    // Pointers into sendbuf only for blocks with bytes: it may be null when all are empty.
    if (d == ch.me() || out_bytes(d) == 0) continue;
    copy_bytes(at, send + args.displs[static_cast<size_t>(ch.world_rank(d))] * es, out_bytes(d));
    at += out_bytes(d);
  }
  return {true, stage, head + (packed ? total : 0), kEveryone};
}

// Every rank's recvcounts against every rank's sendcounts, in the same order on every rank.
void check_alltoallv_counts(const NodeChannel &ch, uint32_t turn) {
  const auto n = static_cast<size_t>(ch.size());
  if (!alltoallv_counts(n)) return;  // the windows' messages check the sizes instead
  auto words = [&](int s) {
    return reinterpret_cast<const uint64_t *>(ch.call_slot(s, turn).data);
  };
  for (int s = 0; s < ch.size(); ++s)      // what rank s sends
    for (int r = 0; r < ch.size(); ++r) {  // ... to rank r, and what r expects from s
      const auto rs = static_cast<size_t>(ch.world_rank(s));
      const auto rr = static_cast<size_t>(ch.world_rank(r));
      check_v_count(static_cast<int>(rr), "recvcounts", static_cast<int>(rs), words(r)[2 + n + rs],
                    "sendcounts", words(s)[2 + rr], static_cast<int>(rr));
    }
}

}  // namespace

size_t alltoallv_head_bytes(size_t n) {
  return (alltoallv_counts(n) ? 2 + 2 * n : 2) * sizeof(uint64_t);
}

bool alltoallv_packed(const void *record) {
  uint64_t packed = 0;
  std::memcpy(&packed, static_cast<const char *>(record) + sizeof(uint64_t), sizeof packed);
  return packed != kNotPacked;
}

bool alltoallv_room_for_refs(size_t n) {
  return alltoallv_counts(n) && alltoallv_head_bytes(n) + alltoallv_refs_bytes(n) <= kRoom;
}

size_t stage_allgatherv_head(const NodeChannel &ch, const CollArgs &args, uint64_t *stage) {
  const auto n = static_cast<size_t>(ch.size());
  stage[0] = args.count;
  for (size_t r = 0; with_counts(n) && r < n; ++r) stage[1 + r] = args.counts[r];
  return allgatherv_head_bytes(n);
}

void check_allgatherv_counts(const NodeChannel &ch, uint32_t turn, const CollArgs &args) {
  auto rank_of = [&](int s) { return static_cast<size_t>(ch.world_rank(s)); };
  auto words = [&](int s) {
    return reinterpret_cast<const uint64_t *>(ch.call_slot(s, turn).data);
  };
  const bool all_counts = with_counts(static_cast<size_t>(ch.size()));
  for (int s = 0; s < ch.size(); ++s) {  // block s, as rank s sends it
    if (!all_counts) {
      check_v_count(ch.world_rank(ch.me()), "recvcounts", ch.world_rank(s), args.counts[rank_of(s)],
                    "sendcount", words(s)[0]);
      continue;
    }
    for (int r = 0; r < ch.size(); ++r)  // ... and as rank r expects it
      check_v_count(ch.world_rank(r), "recvcounts", ch.world_rank(s), words(r)[1 + rank_of(s)],
                    "sendcount", words(s)[0]);
  }
}

TinyPlan tiny_plan(const NodeChannel &ch, const CollArgs &args, uint64_t *stage) {
  const size_t n = static_cast<size_t>(ch.size());
  if (n < 2) return {};
  const size_t bytes = args.bytes();
  const int root = static_cast<int>(local_root(ch, args));
  const bool is_root = ch.me() == root;
  switch (args.kind) {
    case CollKind::barrier:
      return {true, nullptr, 0, kEveryone};
    case CollKind::allreduce:
      return {bytes > 0 && bytes <= kRoom, args.sendbuf, bytes, kEveryone};
    case CollKind::broadcast:
      // The root hands the vector over and returns; the others need only its record.
      if (is_root) return {bytes > 0 && bytes <= kRoom, args.recvbuf, bytes, kNobody, kEveryone};
      return {bytes > 0 && bytes <= kRoom, nullptr, 0, root};
    case CollKind::reduce:
    case CollKind::gather:
      // Off the root: hand the vector (block) over with the record; nothing comes back.
      if (is_root) return {bytes <= kRoom, args.sendbuf, bytes, kEveryone};
      return {bytes <= kRoom, args.sendbuf, bytes, kNobody, root};
    case CollKind::scatter: {
      // The root hands the blocks over with its record; the others need only its record.
      const ScatterRecord r = scatter_record(ch, args);
      const bool fits = bytes * r.blocks <= kRoom;
      if (is_root)
        return {fits, static_cast<const char *>(args.sendbuf) + r.skip, bytes * r.blocks, kNobody,
                kEveryone};
      return {fits, nullptr, 0, root};
    }
    case CollKind::allgather:
      return {bytes <= kRoom, args.sendbuf, bytes, kEveryone};
    case CollKind::alltoall:
    case CollKind::reduce_scatter:
      return {bytes * n <= kRoom, args.sendbuf, bytes * n, kEveryone};
    case CollKind::allgatherv: {
      // Small when every block fits after the head, by this rank's recvcounts (the same on
      // every rank that agrees with the others; one that does not fails the check).
      const size_t head = allgatherv_head_bytes(n);
      size_t largest = 0;
      for (int s = 0; s < ch.size(); ++s)
        largest = std::max(largest, args.counts[static_cast<size_t>(ch.world_rank(s))]);
      if (stage == nullptr || largest * args.elem_size > kRoom - head) return {};
      stage_allgatherv_head(ch, args, stage);
      size_t record = head;
      if (bytes <= kRoom - head) {  // else its count disagrees: the check will say so
        copy_bytes(reinterpret_cast<char *>(stage) + head, args.sendbuf, bytes);
        record += bytes;
      }
      return {true, stage, record, kEveryone};
    }
    case CollKind::alltoallv:
      if (stage == nullptr) return {};
      return stage_alltoallv(ch, args, stage);
    default:
      return {};
  }
}

void tiny_prepare(const NodeChannel &ch, const CollArgs &args) {
  if (args.kind != CollKind::scatter || static_cast<size_t>(ch.me()) != local_root(ch, args))
    return;
  const auto *own = static_cast<const char *>(args.sendbuf) +
                    static_cast<size_t>(ch.world_rank(ch.me())) * args.bytes();
  if (own != args.recvbuf) std::memcpy(args.recvbuf, own, args.bytes());  // else in place
}

ReadSpan tiny_read_span(const NodeChannel &ch, const CollArgs &args, int s) {
  // The kind first: every small inline call asks, and only these two have a root to look up.
  if (args.kind != CollKind::broadcast && args.kind != CollKind::scatter) return {};
  const auto root = local_root(ch, args);
  if (static_cast<size_t>(s) != root || static_cast<size_t>(ch.me()) == root) return {};
  const size_t bytes = args.bytes();
  if (args.kind == CollKind::broadcast) return {0, bytes};
  return {static_cast<size_t>(ch.world_rank(ch.me())) * bytes - scatter_record(ch, args).skip,
          bytes};
}

bool tiny_finish(NodeChannel &ch, uint32_t turn, const CollArgs &args) {
  const int n = ch.size(), me = ch.me();
  const size_t bytes = args.bytes();
  const bool is_root = static_cast<size_t>(me) == local_root(ch, args);
  auto data = [&](int s) -> const char * { return ch.call_slot(s, turn).data; };
  // Where local rank s's block goes (or comes from) in a buffer of one block per rank.
  auto at = [&](int s) { return static_cast<size_t>(ch.world_rank(s)) * bytes; };
  const auto *send = static_cast<const char *>(args.sendbuf);
  auto *recv = static_cast<char *>(args.recvbuf);
  switch (args.kind) {
    case CollKind::barrier:
      return true;
    case CollKind::allreduce:
      combine(ch, args, recv, args.count, data);
      return true;
    case CollKind::broadcast:
      if (!is_root) std::memcpy(recv, data(static_cast<int>(local_root(ch, args))), bytes);
      return true;
    case CollKind::reduce:
      if (is_root) combine(ch, args, recv, args.count, data);
      return true;
    case CollKind::gather:
    case CollKind::allgather:
      if (args.kind == CollKind::gather && !is_root) return true;
      if (recv + at(me) != send) std::memcpy(recv + at(me), send, bytes);  // else in place
      for (int s = 0; s < n; ++s)
        if (s != me) std::memcpy(recv + at(s), data(s), bytes);
      return true;
    case CollKind::scatter:
      if (!is_root) {  // the root copied its own block before it published (tiny_prepare)
        const ScatterRecord r = scatter_record(ch, args);
        std::memcpy(recv, data(static_cast<int>(local_root(ch, args))) + at(me) - r.skip, bytes);
      }
      return true;
    case CollKind::alltoall:
      if (send != recv) std::memcpy(recv + at(me), send + at(me), bytes);  // else in place
      for (int s = 0; s < n; ++s)
        if (s != me) std::memcpy(recv + at(s), data(s) + at(me), bytes);
      return true;
    case CollKind::reduce_scatter:
      combine(ch, args, recv, args.count, [&](int s) { return data(s) + at(me); });
      return true;
    case CollKind::allgatherv: {
      check_allgatherv_counts(ch, turn, args);
      const size_t head = allgatherv_head_bytes(static_cast<size_t>(n));
      auto rank_of = [&](int s) { return static_cast<size_t>(ch.world_rank(s)); };
      auto place = [&](int s) { return recv + args.displs[rank_of(s)] * args.elem_size; };
      if (place(me) != send) copy_bytes(place(me), send, bytes);  // else in place
      for (int s = 0; s < n; ++s)
        if (s != me) copy_bytes(place(s), data(s) + head, args.counts[rank_of(s)] * args.elem_size);
      return true;
    }
    case CollKind::alltoallv: {
      check_alltoallv_counts(ch, turn);
      const size_t es = args.elem_size, head = alltoallv_head_bytes(static_cast<size_t>(n));
      auto words = [&](int s) { return reinterpret_cast<const uint64_t *>(data(s)); };
      for (int s = 0; s < n; ++s)
        if (words(s)[1] == kNotPacked) return false;
      auto rank_of = [&](int s) { return static_cast<size_t>(ch.world_rank(s)); };
      auto in = [&](int s) { return recv + args.recv_displs[rank_of(s)] * es; };
      auto in_bytes = [&](int s) { return args.recv_counts[rank_of(s)] * es; };
      // The others' blocks come from their records, so in place (recvbuf is sendbuf) needs
      // nothing special: only this rank's own block is read from sendbuf. Pointers into the
      // buffers only for blocks with bytes: a buffer may be null when all its blocks are empty.
      if (in_bytes(me) > 0) {
        const char *own = send + args.displs[rank_of(me)] * es;
        if (in(me) != own) copy_bytes(in(me), own, in_bytes(me));
      }
      for (int s = 0; s < n; ++s) {
        if (s == me || in_bytes(s) == 0) continue;
        size_t at = head;  // rank s's blocks for the others before this rank come first
        for (int d = 0; d < me; ++d)
          if (d != s) at += words(s)[2 + rank_of(d)] * es;
        copy_bytes(in(s), data(s) + at, in_bytes(s));
      }
      return true;
    }
    default:
      return true;
  }
}

Task tiny_call(CollContext &ctx, NodeChannel &ch, uint32_t turn, const CollArgs &args,
               TinyPlan plan) {
  if (!args.entered) tiny_prepare(ch, args);  // else the inline path did, before it published
  co_await agree_on_call(ctx, ch, turn, args, plan.data, plan.bytes, plan.wait_for,
                         plan.check_later, calls_ahead(args.kind, plan.wait_for));
  tiny_finish(ch, turn, args);
}

}  // namespace braid::coll
