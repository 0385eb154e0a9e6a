#include "braid_backend.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithm_name.hpp"
#include "build_info.hpp"
#include "text.hpp"

namespace braid_bench {
namespace {

void check(braid_result_t r, const char *what) {
  if (r != BRAID_SUCCESS)
    throw std::runtime_error(cat(what, " failed: ", braid_strerror(r), ": ", braid_last_error()));
}

}  // namespace

braid_dtype_t to_braid(Dtype d) {
  switch (d) {
    case Dtype::int8:
      return BRAID_INT8;
    case Dtype::uint8:
      return BRAID_UINT8;
    case Dtype::int32:
      return BRAID_INT32;
    case Dtype::uint32:
      return BRAID_UINT32;
    case Dtype::int64:
      return BRAID_INT64;
    case Dtype::uint64:
      return BRAID_UINT64;
    case Dtype::int16:
      return BRAID_INT16;
    case Dtype::uint16:
      return BRAID_UINT16;
    case Dtype::float16:
      return BRAID_FLOAT16;
    case Dtype::bfloat16:
      return BRAID_BFLOAT16;
    case Dtype::float32:
      return BRAID_FLOAT32;
    case Dtype::float64:
      return BRAID_FLOAT64;
  }
  return BRAID_UINT8;
}

braid_op_t to_braid(Op op) {
  switch (op) {
    case Op::sum:
      return BRAID_SUM;
    case Op::prod:
      return BRAID_PROD;
    case Op::min:
      return BRAID_MIN;
    case Op::max:
      return BRAID_MAX;
  }
  return BRAID_SUM;
}

BraidBackend::BraidBackend(braid_comm_t world)
    : world_(world), rank_(braid_comm_rank(world)), size_(braid_comm_size(world)) {}

std::string BraidBackend::transport() const {
  const char *t = braid_comm_transport(world_);
  return t ? t : "?";
}

std::string BraidBackend::algorithm(Collective c, size_t bytes, size_t count) const {
  std::string name = braid_algorithm(c, bytes, count, size_);
  // The selection table cannot know the buffers, nor what the node path measured: the counters
  // say how the calls of this size went. "auto(shm)" becomes "auto(shm:zero-copy)" when they
  // went in place, "auto(shm:single-copy)" when most went by CMA (at least a quarter of all
  // calls started: in osu mode a barrier precedes each timed call).
  const uint64_t zero = counter("intranode_zero_copy_calls");
  const uint64_t single = counter("intranode_single_copy_calls");
  const uint64_t started = counter("collectives_started");
  const char *tag = nullptr;
  if (zero != zero_copy_seen_)
    tag = ":zero-copy";
  else if (4 * (single - single_copy_seen_) >= started - started_seen_ &&
           single != single_copy_seen_)
    tag = ":single-copy";
  if (tag != nullptr && !name.empty() && name.back() == ')') name.insert(name.size() - 1, tag);
  zero_copy_seen_ = zero;
  single_copy_seen_ = single;
  started_seen_ = started;
  return name;
}

uint64_t BraidBackend::counter(const char *wanted) const {
  size_t n = 0;
  if (braid_comm_counters(world_, nullptr, &n) != BRAID_SUCCESS || n == 0) return 0;
  std::vector<braid_counter_t> all(n);
  if (braid_comm_counters(world_, all.data(), &n) != BRAID_SUCCESS) return 0;
  for (size_t i = 0; i < n && i < all.size(); ++i)
    if (std::string(all[i].name) == wanted) return all[i].value;
  return 0;
}

BuildInfo BraidBackend::build_info() const {
  BuildInfo b = this_build();
  b.library = cat("braid ", b.braid_version);
  return b;
}

void BraidBackend::allreduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) {
  check(braid_allreduce(sendbuf, recvbuf, count, to_braid(d), to_braid(op), world_),
        "braid_allreduce");
}

void BraidBackend::broadcast(void *buf, size_t count, Dtype d, int root) {
  check(braid_broadcast(buf, count, to_braid(d), root, world_), "braid_broadcast");
}

void BraidBackend::barrier() {
  check(braid_barrier(world_), "braid_barrier");
}

void BraidBackend::reduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op,
                          int root) {
  check(braid_reduce(sendbuf, recvbuf, count, to_braid(d), to_braid(op), root, world_),
        "braid_reduce");
}

void BraidBackend::allgather(const void *sendbuf, void *recvbuf, size_t count, Dtype d) {
  check(braid_allgather(sendbuf, recvbuf, count, to_braid(d), world_), "braid_allgather");
}

void BraidBackend::allgatherv(const void *sendbuf, size_t count, void *recvbuf,
                              const size_t *counts, const size_t *displs, Dtype d) {
  check(braid_allgatherv(sendbuf, count, recvbuf, counts, displs, to_braid(d), world_),
        "braid_allgatherv");
}

void BraidBackend::reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d,
                                  Op op) {
  check(braid_reduce_scatter(sendbuf, recvbuf, count, to_braid(d), to_braid(op), world_),
        "braid_reduce_scatter");
}

void BraidBackend::alltoall(const void *sendbuf, void *recvbuf, size_t count, Dtype d) {
  check(braid_alltoall(sendbuf, recvbuf, count, to_braid(d), world_), "braid_alltoall");
}

void BraidBackend::alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                             void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                             Dtype d) {
  check(braid_alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, to_braid(d),
                        world_),
        "braid_alltoallv");
}

void BraidBackend::gather(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) {
  check(braid_gather(sendbuf, recvbuf, count, to_braid(d), root, world_), "braid_gather");
}

void BraidBackend::scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) {
  check(braid_scatter(sendbuf, recvbuf, count, to_braid(d), root, world_), "braid_scatter");
}

void *BraidBackend::alloc_buffer(size_t bytes) {
  const char *node_text = std::getenv("BRAID_BENCH_BUFFER_NODE");
  if (node_text == nullptr || *node_text == '\0') return nullptr;
  const std::string text = node_text;
  void *p = nullptr;
  if (text == "remote") {
    // The next node after this rank's, wrapping: on 2 nodes, the other one.
    const int mine = braid_comm_numa_node(world_);
    if (braid_mem_alloc(bytes, mine + 1, &p) == BRAID_SUCCESS) return p;
    check(braid_mem_alloc(bytes, 0, &p), "braid_mem_alloc");
    return p;
  }
  const int node = text == "local" ? BRAID_NUMA_LOCAL : std::atoi(node_text);
  check(braid_mem_alloc(bytes, node, &p), "braid_mem_alloc");
  return p;
}

void BraidBackend::free_buffer(void *p) {
  (void)braid_mem_free(p);
}

}  // namespace braid_bench
