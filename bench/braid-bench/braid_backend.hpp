// braid-bench's Backend: the braid C API on the world communicator.
#pragma once

#include <braid/braid.h>

#include "backend.hpp"

namespace braid_bench {

class BraidBackend final : public Backend {
 public:
  explicit BraidBackend(braid_comm_t world);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string transport() const override;
  std::string algorithm(Collective c, size_t bytes, size_t count) const override;
  BuildInfo build_info() const override;

  void allreduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) override;
  void broadcast(void *buf, size_t count, Dtype d, int root) override;
  void barrier() override;
  void reduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op, int root) override;
  void allgather(const void *sendbuf, void *recvbuf, size_t count, Dtype d) override;
  void allgatherv(const void *sendbuf, size_t count, void *recvbuf, const size_t *counts,
                  const size_t *displs, Dtype d) override;
  void reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) override;
  void alltoall(const void *sendbuf, void *recvbuf, size_t count, Dtype d) override;
  void alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                 void *recvbuf, const size_t *recvcounts, const size_t *rdispls, Dtype d) override;
  void gather(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) override;
  void scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) override;
  // With BRAID_BENCH_BUFFER_NODE=local|remote|N: braid_mem_alloc on that NUMA node (remote:
  // the node after the rank's own, wrapping).
  void *alloc_buffer(size_t bytes) override;
  void free_buffer(void *p) override;

 private:
  // braid's counter `name` (braid_comm_counters), 0 when it has none.
  uint64_t counter(const char *name) const;
  braid_comm_t world_;
  int rank_;
  int size_;
  // As of the last algorithm() call: node-local collectives done in place (zero-copy) on
  // braid_mem_alloc buffers, by single copy (CMA) on ordinary ones, and all collectives.
  mutable uint64_t zero_copy_seen_ = 0;
  mutable uint64_t single_copy_seen_ = 0;
  mutable uint64_t started_seen_ = 0;
};

braid_dtype_t to_braid(Dtype d);
braid_op_t to_braid(Op op);

}  // namespace braid_bench
