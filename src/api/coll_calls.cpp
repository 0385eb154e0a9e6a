#include "api/coll_calls.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "error.hpp"
#include "kernels/dtype.hpp"

namespace braid::detail {
namespace {

using coll::CollKind;

coll::CollArgs args_of(CollKind kind, const void *sendbuf, void *recvbuf, size_t count, int dtype) {
  coll::CollArgs a;
  a.kind = kind;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  a.count = count;
  a.dtype = static_cast<braid_dtype_t>(dtype);
  a.elem_size = coll::dtype_size(a.dtype);
  return a;
}

void check_op(Comm &comm, const char *what, int op, int dtype) {
  if (!coll::op_valid(op))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": unknown op ", op);
  const auto o = static_cast<braid_op_t>(op);
  const auto d = static_cast<braid_dtype_t>(dtype);
  if (const char *why = coll::op_dtype_problem(o, d))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": op ", coll::op_name(o),
         " on dtype ", coll::dtype_name(d), ": ", why);
}

void check_root(Comm &comm, const char *what, int root) {
  if (root < 0 || root >= comm.size)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": root ", root,
         " is out of range [0, ", comm.size, ")");
}

void check_buffer(Comm &comm, const char *what, const char *name, const void *p, size_t bytes) {
  if (p == nullptr && bytes > 0)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": ", name, " is NULL with ",
         bytes, " bytes to ", name[0] == 's' ? "send" : "receive");
  check_range(comm, what, name, p, bytes);
}

// Buffers that overlap without being the in-place form are refused: the result would depend
// on the order the algorithm reads and writes.
void check_overlap(Comm &comm, const char *what, const void *a, size_t a_bytes, const void *b,
                   size_t b_bytes) {
  const auto *x = static_cast<const char *>(a);
  const auto *y = static_cast<const char *>(b);
  if (a_bytes == 0 || b_bytes == 0 || x == nullptr || y == nullptr) return;
  if (x < y + b_bytes && y < x + a_bytes)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what,
         ": sendbuf and recvbuf overlap without being the in-place form");
}

size_t total_bytes(Comm &comm, const char *what, size_t block, int n) {
  if (block != 0 && static_cast<size_t>(n) > SIZE_MAX / block)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": ", n, " blocks of ", block,
         " bytes overflow size_t");
  return block * static_cast<size_t>(n);
}

void check_array(Comm &comm, const char *what, const char *name, const size_t *p) {
  if (p == nullptr)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": ", name, " is NULL");
}

// Bytes spanned by blocks (counts, displs) of elem_size, checked for overflow.
size_t span_bytes(Comm &comm, const char *what, const size_t *counts, const size_t *displs,
                  size_t elem_size) {
  size_t end = 0;
  for (int r = 0; r < comm.size; ++r) {
    const size_t c = counts[r], d = displs[r];
    if (c > SIZE_MAX - d || c + d > SIZE_MAX / elem_size)
      fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": block ", r, " (count ", c,
           ", displacement ", d, ") overflows size_t");
    if (c > 0) end = std::max(end, (c + d) * elem_size);
  }
  return end;
}

// Receive blocks that overlap would be written by two peers (in an order that differs between
// ranks, so the results would too): refused, naming both. Zero-count blocks hold nothing.
void check_disjoint(Comm &comm, const char *what, const size_t *counts, const size_t *displs) {
  // Blocks in rank order, one after another (the common layout), need no sort.
  size_t end = 0;
  bool in_order = true;
  for (int r = 0; r < comm.size && in_order; ++r)
    if (counts[r] > 0) {
      in_order = displs[r] >= end;
      end = displs[r] + counts[r];
    }
  if (in_order) return;
  std::vector<int> blocks;
  for (int r = 0; r < comm.size; ++r)
    if (counts[r] > 0) blocks.push_back(r);
  std::sort(blocks.begin(), blocks.end(), [&](int x, int y) { return displs[x] < displs[y]; });
  for (size_t i = 1; i < blocks.size(); ++i) {
    const int p = blocks[i - 1], q = blocks[i];
    if (displs[p] + counts[p] > displs[q])  // no overflow: span_bytes checked every block
      fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": receive blocks ", p,
           " (displacement ", displs[p], ", count ", counts[p], ") and ", q, " (displacement ",
           displs[q], ", count ", counts[q], ") overlap");
  }
}

}  // namespace

std::shared_ptr<coll::Collective> start_reduce(Comm &comm, const void *sendbuf, void *recvbuf,
                                               size_t count, int dtype, int op, int root) {
  const char *what = "reduce";
  const size_t bytes = checked_bytes(comm, what, count, dtype);
  check_op(comm, what, op, dtype);
  check_root(comm, what, root);
  coll::CollArgs a = args_of(CollKind::reduce, sendbuf, recvbuf, count, dtype);
  a.op = static_cast<braid_op_t>(op);
  a.root = root;
  if (count == 0) return empty_call(comm, a);
  check_buffer(comm, what, "sendbuf", sendbuf, bytes);
  const bool is_root = comm.rank == root;
  if (is_root) {
    check_buffer(comm, what, "recvbuf", recvbuf, bytes);
    if (sendbuf != recvbuf) check_overlap(comm, what, sendbuf, bytes, recvbuf, bytes);
  }
  if (comm.size == 1) {
    reduce_alone(recvbuf, sendbuf, count, a.dtype, a.op);
    return nullptr;
  }
  if (!is_root) a.recvbuf = nullptr;  // ignored off the root
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_allgather(Comm &comm, const void *sendbuf, void *recvbuf,
                                                  size_t sendcount, int dtype) {
  const char *what = "allgather";
  const size_t block = checked_bytes(comm, what, sendcount, dtype);
  const size_t total = total_bytes(comm, what, block, comm.size);
  coll::CollArgs a = args_of(CollKind::allgather, sendbuf, recvbuf, sendcount, dtype);
  if (sendcount == 0) return empty_call(comm, a);
  check_buffer(comm, what, "recvbuf", recvbuf, total);
  check_buffer(comm, what, "sendbuf", sendbuf, block);
  char *own = static_cast<char *>(recvbuf) + static_cast<size_t>(comm.rank) * block;
  if (sendbuf != own) check_overlap(comm, what, sendbuf, block, recvbuf, total);
  if (comm.size == 1) {
    if (sendbuf != own) std::memcpy(own, sendbuf, block);
    return nullptr;
  }
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_allgatherv(Comm &comm, const void *sendbuf,
                                                   size_t sendcount, void *recvbuf,
                                                   const size_t *recvcounts, const size_t *displs,
                                                   int dtype) {
  const char *what = "allgatherv";
  const size_t block = checked_bytes(comm, what, sendcount, dtype);
  check_array(comm, what, "recvcounts", recvcounts);
  check_array(comm, what, "displs", displs);
  const auto me = static_cast<size_t>(comm.rank);
  if (recvcounts[me] != sendcount)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": recvcounts[", comm.rank,
         "] is ", recvcounts[me], " but this rank's sendcount is ", sendcount);
  coll::CollArgs a = args_of(CollKind::allgatherv, sendbuf, recvbuf, sendcount, dtype);
  a.counts = recvcounts;
  a.displs = displs;
  const size_t span = span_bytes(comm, what, recvcounts, displs, a.elem_size);
  check_disjoint(comm, what, recvcounts, displs);
  if (span > 0) {
    check_buffer(comm, what, "recvbuf", recvbuf, span);
    check_buffer(comm, what, "sendbuf", sendbuf, block);
    char *own = static_cast<char *>(recvbuf) + displs[me] * a.elem_size;
    if (sendbuf != own) check_overlap(comm, what, sendbuf, block, recvbuf, span);
    if (comm.size == 1 && sendbuf != own && block > 0) std::memcpy(own, sendbuf, block);
  }
  if (comm.size == 1) return nullptr;
  // Every rank takes part even when it expects nothing at all (as in alltoallv): another rank
  // that sends it a block must learn that it expected none, and the exchange is how.
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_reduce_scatter(Comm &comm, const void *sendbuf,
                                                       void *recvbuf, size_t recvcount, int dtype,
                                                       int op) {
  const char *what = "reduce_scatter";
  const size_t block = checked_bytes(comm, what, recvcount, dtype);
  check_op(comm, what, op, dtype);
  const size_t total = total_bytes(comm, what, block, comm.size);
  coll::CollArgs a = args_of(CollKind::reduce_scatter, sendbuf, recvbuf, recvcount, dtype);
  a.op = static_cast<braid_op_t>(op);
  if (recvcount == 0) return empty_call(comm, a);
  check_buffer(comm, what, "sendbuf", sendbuf, total);
  check_buffer(comm, what, "recvbuf", recvbuf, block);
  const char *own = static_cast<const char *>(sendbuf) + static_cast<size_t>(comm.rank) * block;
  if (recvbuf != own) check_overlap(comm, what, sendbuf, total, recvbuf, block);
  if (comm.size == 1) {
    reduce_alone(recvbuf, own, recvcount, a.dtype, a.op);
    return nullptr;
  }
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_alltoall(Comm &comm, const void *sendbuf, void *recvbuf,
                                                 size_t count, int dtype) {
  const char *what = "alltoall";
  const size_t block = checked_bytes(comm, what, count, dtype);
  const size_t total = total_bytes(comm, what, block, comm.size);
  coll::CollArgs a = args_of(CollKind::alltoall, sendbuf, recvbuf, count, dtype);
  if (count == 0) return empty_call(comm, a);
  check_buffer(comm, what, "sendbuf", sendbuf, total);
  check_buffer(comm, what, "recvbuf", recvbuf, total);
  if (sendbuf != recvbuf) check_overlap(comm, what, sendbuf, total, recvbuf, total);
  if (comm.size == 1) {
    if (sendbuf != recvbuf) std::memcpy(recvbuf, sendbuf, block);
    return nullptr;
  }
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_alltoallv(Comm &comm, const void *sendbuf,
                                                  const size_t *sendcounts, const size_t *sdispls,
                                                  void *recvbuf, const size_t *recvcounts,
                                                  const size_t *rdispls, int dtype) {
  const char *what = "alltoallv";
  checked_bytes(comm, what, 0, dtype);
  check_array(comm, what, "sendcounts", sendcounts);
  check_array(comm, what, "sdispls", sdispls);
  check_array(comm, what, "recvcounts", recvcounts);
  check_array(comm, what, "rdispls", rdispls);
  coll::CollArgs a = args_of(CollKind::alltoallv, sendbuf, recvbuf, 0, dtype);
  a.counts = sendcounts;
  a.displs = sdispls;
  a.recv_counts = recvcounts;
  a.recv_displs = rdispls;
  const size_t send_span = span_bytes(comm, what, sendcounts, sdispls, a.elem_size);
  const size_t recv_span = span_bytes(comm, what, recvcounts, rdispls, a.elem_size);
  check_disjoint(comm, what, recvcounts, rdispls);
  a.count = send_span / a.elem_size;  // for the label only (counts differ between ranks)
  check_buffer(comm, what, "sendbuf", sendbuf, send_span);
  check_buffer(comm, what, "recvbuf", recvbuf, recv_span);
  check_overlap(comm, what, sendbuf, send_span, recvbuf, recv_span);
  const auto me = static_cast<size_t>(comm.rank);
  if (sendcounts[me] != recvcounts[me])
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": sendcounts[", comm.rank,
         "] is ", sendcounts[me], " but recvcounts[", comm.rank, "] is ", recvcounts[me],
         " (what this rank sends itself)");
  if (comm.size == 1) {
    if (sendcounts[0] > 0)
      std::memcpy(static_cast<char *>(recvbuf) + rdispls[0] * a.elem_size,
                  static_cast<const char *>(sendbuf) + sdispls[0] * a.elem_size,
                  sendcounts[0] * a.elem_size);
    return nullptr;
  }
  // Every rank takes part even with nothing to send or receive: the others' zero-byte messages
  // to and from it are how they know it had nothing.
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_gather(Comm &comm, const void *sendbuf, void *recvbuf,
                                               size_t count, int dtype, int root) {
  const char *what = "gather";
  const size_t block = checked_bytes(comm, what, count, dtype);
  check_root(comm, what, root);
  const size_t total = total_bytes(comm, what, block, comm.size);
  coll::CollArgs a = args_of(CollKind::gather, sendbuf, recvbuf, count, dtype);
  a.root = root;
  if (count == 0) return empty_call(comm, a);
  check_buffer(comm, what, "sendbuf", sendbuf, block);
  const bool is_root = comm.rank == root;
  if (is_root) {
    check_buffer(comm, what, "recvbuf", recvbuf, total);
    const char *own = static_cast<char *>(recvbuf) + static_cast<size_t>(root) * block;
    if (sendbuf != own) check_overlap(comm, what, sendbuf, block, recvbuf, total);
  } else {
    a.recvbuf = nullptr;  // ignored off the root
  }
  if (comm.size == 1) {
    if (sendbuf != recvbuf) std::memcpy(recvbuf, sendbuf, block);
    return nullptr;
  }
  return launch(comm, a);
}

std::shared_ptr<coll::Collective> start_scatter(Comm &comm, const void *sendbuf, void *recvbuf,
                                                size_t count, int dtype, int root) {
  const char *what = "scatter";
  const size_t block = checked_bytes(comm, what, count, dtype);
  check_root(comm, what, root);
  const size_t total = total_bytes(comm, what, block, comm.size);
  coll::CollArgs a = args_of(CollKind::scatter, sendbuf, recvbuf, count, dtype);
  a.root = root;
  if (count == 0) return empty_call(comm, a);
  check_buffer(comm, what, "recvbuf", recvbuf, block);
  const bool is_root = comm.rank == root;
  if (is_root) {
    check_buffer(comm, what, "sendbuf", sendbuf, total);
    const char *own = static_cast<const char *>(sendbuf) + static_cast<size_t>(root) * block;
    if (recvbuf != own) check_overlap(comm, what, sendbuf, total, recvbuf, block);
  } else {
    a.sendbuf = nullptr;  // ignored off the root
  }
  if (comm.size == 1) {
    if (sendbuf != recvbuf) std::memcpy(recvbuf, sendbuf, block);
    return nullptr;
  }
  return launch(comm, a);
}

}  // namespace braid::detail
