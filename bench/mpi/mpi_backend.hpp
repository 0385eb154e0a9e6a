// braid-bench-mpi's Backend: MPI_Allreduce, MPI_Bcast and MPI_Barrier on MPI_COMM_WORLD, the
// baseline braid is compared with.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "backend.hpp"

namespace braid_bench {

class MpiBackend final : public Backend {
 public:
  MpiBackend();  // after MPI_Init; errors on MPI_COMM_WORLD are returned, not fatal
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string transport() const override { return "mpi"; }
  std::string algorithm(Collective, size_t, size_t) const override { return "-"; }
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

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Why MPI cannot run collective c on dtype d (MPI has no 16-bit float reductions; broadcast
// moves them as 16-bit integers), or nullopt when it can.
std::optional<std::string> mpi_unsupported(Collective c, Dtype d);

}  // namespace braid_bench
