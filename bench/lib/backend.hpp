// What a benchmark program measures: braid (braid-bench) or MPI (braid-bench-mpi). The sweep,
// timing, checking and output are shared; a Backend only makes the calls. Every method
// throws std::runtime_error with the library's message when a call fails.
#pragma once

#include <cstddef>
#include <string>

#include "report.hpp"
#include "types.hpp"

namespace braid_bench {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string transport() const = 0;
  // The "algorithm" column for one size.
  virtual std::string algorithm(Collective c, size_t bytes, size_t count) const = 0;
  virtual BuildInfo build_info() const = 0;

  // sendbuf == recvbuf means in place.
  virtual void allreduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) = 0;
  virtual void broadcast(void *buf, size_t count, Dtype d, int root) = 0;
  virtual void barrier() = 0;
  // The rest of the set, with the C API's arguments (counts are elements; `count` is one
  // rank's block for the block collectives). recvbuf of reduce and gather off the root and
  // sendbuf of scatter off the root may be null.
  virtual void reduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op,
                      int root) = 0;
  virtual void allgather(const void *sendbuf, void *recvbuf, size_t count, Dtype d) = 0;
  virtual void allgatherv(const void *sendbuf, size_t count, void *recvbuf, const size_t *counts,
                          const size_t *displs, Dtype d) = 0;
  virtual void reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) = 0;
  virtual void alltoall(const void *sendbuf, void *recvbuf, size_t count, Dtype d) = 0;
  virtual void alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                         void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                         Dtype d) = 0;
  virtual void gather(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) = 0;
  virtual void scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) = 0;

  // Benchmark buffers from the library's own allocator (e.g. NUMA-placed); nullptr means "use
  // the driver's page-aligned malloc". free_buffer gets back only what alloc_buffer returned.
  virtual void *alloc_buffer(size_t bytes) {
    (void)bytes;
    return nullptr;
  }
  virtual void free_buffer(void *p) { (void)p; }
};

}  // namespace braid_bench
