#include "intranode/tiny_calls.hpp"

#include <cstring>

#include "kernels/reduce_kernels.hpp"

namespace braid::coll {
namespace {

constexpr size_t kRoom = sizeof(CallSlot::data);

size_t local_root(const NodeChannel &ch, const CollArgs &args) {
  return static_cast<size_t>(ch.map().local_index[args.root]);
}

// out = in(0) op in(1) op ... in local rank order, the lowest rank's data on the left:
// identical bits on every rank.
template <typename In>
void combine(const NodeChannel &ch, const CollArgs &args, void *out, size_t count, In in) {
  reduce(out, in(0), in(1), count, args.dtype, args.op);
  for (int s = 2; s < ch.size(); ++s) reduce(out, out, in(s), count, args.dtype, args.op);
}

}  // namespace

TinyPlan tiny_plan(const NodeChannel &ch, const CollArgs &args) {
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
    case CollKind::scatter:
      // The root hands every block over with its record; the others need only its record.
      if (is_root) return {bytes * n <= kRoom, args.sendbuf, bytes * n, kNobody, kEveryone};
      return {bytes * n <= kRoom, nullptr, 0, root};
    case CollKind::allgather:
      return {bytes <= kRoom, args.sendbuf, bytes, kEveryone};
    case CollKind::alltoall:
    case CollKind::reduce_scatter:
      return {bytes * n <= kRoom, args.sendbuf, bytes * n, kEveryone};
    default:
      return {};
  }
}

void tiny_finish(NodeChannel &ch, uint32_t turn, const CollArgs &args) {
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
      return;
    case CollKind::allreduce:
      combine(ch, args, recv, args.count, data);
      return;
    case CollKind::broadcast:
      if (!is_root) std::memcpy(recv, data(static_cast<int>(local_root(ch, args))), bytes);
      return;
    case CollKind::reduce:
      if (is_root) combine(ch, args, recv, args.count, data);
      return;
    case CollKind::gather:
    case CollKind::allgather:
      if (args.kind == CollKind::gather && !is_root) return;
      if (recv + at(me) != send) std::memcpy(recv + at(me), send, bytes);  // else in place
      for (int s = 0; s < n; ++s)
        if (s != me) std::memcpy(recv + at(s), data(s), bytes);
      return;
    case CollKind::scatter:
      if (is_root) {
        if (send + at(me) != recv) std::memcpy(recv, send + at(me), bytes);
      } else {
        std::memcpy(recv, data(static_cast<int>(local_root(ch, args))) + at(me), bytes);
      }
      return;
    case CollKind::alltoall:
      if (send != recv) std::memcpy(recv + at(me), send + at(me), bytes);  // else in place
      for (int s = 0; s < n; ++s)
        if (s != me) std::memcpy(recv + at(s), data(s) + at(me), bytes);
      return;
    case CollKind::reduce_scatter:
      combine(ch, args, recv, args.count, [&](int s) { return data(s) + at(me); });
      return;
    default:
      return;
  }
}

}  // namespace braid::coll
