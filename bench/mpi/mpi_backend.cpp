#include "mpi_backend.hpp"

#include <climits>
#include <stdexcept>
#include <vector>

#include "build_info.hpp"
#include "text.hpp"

namespace braid_bench {
namespace {

void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(cat(what, " failed: ", text));
}

MPI_Datatype to_mpi(Dtype d) {
  switch (d) {
    case Dtype::int8:
      return MPI_INT8_T;
    case Dtype::uint8:
      return MPI_UINT8_T;
    case Dtype::int32:
      return MPI_INT32_T;
    case Dtype::uint32:
      return MPI_UINT32_T;
    case Dtype::int64:
      return MPI_INT64_T;
    case Dtype::uint64:
      return MPI_UINT64_T;
    case Dtype::int16:
      return MPI_INT16_T;
    case Dtype::uint16:
      return MPI_UINT16_T;
    case Dtype::float16:
    case Dtype::bfloat16:
      return MPI_UINT16_T;  // bits only: moved, never reduced (mpi_unsupported)
    case Dtype::float32:
      return MPI_FLOAT;
    case Dtype::float64:
      return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

MPI_Op to_mpi(Op op) {
  switch (op) {
    case Op::sum:
      return MPI_SUM;
    case Op::prod:
      return MPI_PROD;
    case Op::min:
      return MPI_MIN;
    case Op::max:
      return MPI_MAX;
  }
  return MPI_SUM;
}

int mpi_count(size_t count) {
  if (count > static_cast<size_t>(INT_MAX))
    throw std::runtime_error(cat("count ", count, " exceeds MPI's int count limit"));
  return static_cast<int>(count);
}

std::vector<int> mpi_counts(const size_t *v, int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(mpi_count(v[i]));
  return out;
}

}  // namespace

std::optional<std::string> mpi_unsupported(Collective c, Dtype d) {
  if (reduces(c) && (d == Dtype::float16 || d == Dtype::bfloat16))
    return cat("MPI has no ", name(d), " reduction (MPI cannot reduce it); use another --dtype");
  return std::nullopt;
}

MpiBackend::MpiBackend() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

BuildInfo MpiBackend::build_info() const {
  BuildInfo b = this_build();
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string v(version, static_cast<size_t>(len > 0 ? len : 0));
  if (size_t nl = v.find_first_of("\n,"); nl != std::string::npos) v.resize(nl);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\0')) v.pop_back();
  b.library = v.empty() ? "MPI" : v;
  return b;
}

void MpiBackend::allreduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) {
  check(MPI_Allreduce(sendbuf == recvbuf ? MPI_IN_PLACE : sendbuf, recvbuf, mpi_count(count),
                      to_mpi(d), to_mpi(op), MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void MpiBackend::broadcast(void *buf, size_t count, Dtype d, int root) {
  check(MPI_Bcast(buf, mpi_count(count), to_mpi(d), root, MPI_COMM_WORLD), "MPI_Bcast");
}

void MpiBackend::barrier() {
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void MpiBackend::reduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op,
                        int root) {
  const bool in_place = rank_ == root && sendbuf == recvbuf;
  check(MPI_Reduce(in_place ? MPI_IN_PLACE : sendbuf, recvbuf, mpi_count(count), to_mpi(d),
                   to_mpi(op), root, MPI_COMM_WORLD),
        "MPI_Reduce");
}

void MpiBackend::allgather(const void *sendbuf, void *recvbuf, size_t count, Dtype d) {
  check(MPI_Allgather(sendbuf, mpi_count(count), to_mpi(d), recvbuf, mpi_count(count), to_mpi(d),
                      MPI_COMM_WORLD),
        "MPI_Allgather");
}

void MpiBackend::allgatherv(const void *sendbuf, size_t count, void *recvbuf, const size_t *counts,
                            const size_t *displs, Dtype d) {
  const std::vector<int> c = mpi_counts(counts, size_), s = mpi_counts(displs, size_);
  check(MPI_Allgatherv(sendbuf, mpi_count(count), to_mpi(d), recvbuf, c.data(), s.data(), to_mpi(d),
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
}

void MpiBackend::reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op op) {
  check(MPI_Reduce_scatter_block(sendbuf, recvbuf, mpi_count(count), to_mpi(d), to_mpi(op),
                                 MPI_COMM_WORLD),
        "MPI_Reduce_scatter_block");
}

void MpiBackend::alltoall(const void *sendbuf, void *recvbuf, size_t count, Dtype d) {
  check(MPI_Alltoall(sendbuf == recvbuf ? MPI_IN_PLACE : sendbuf, mpi_count(count), to_mpi(d),
                     recvbuf, mpi_count(count), to_mpi(d), MPI_COMM_WORLD),
        "MPI_Alltoall");
}

void MpiBackend::alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                           void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                           Dtype d) {
  const std::vector<int> sc = mpi_counts(sendcounts, size_), sd = mpi_counts(sdispls, size_);
  const std::vector<int> rc = mpi_counts(recvcounts, size_), rd = mpi_counts(rdispls, size_);
  check(MPI_Alltoallv(sendbuf, sc.data(), sd.data(), to_mpi(d), recvbuf, rc.data(), rd.data(),
                      to_mpi(d), MPI_COMM_WORLD),
        "MPI_Alltoallv");
}

void MpiBackend::gather(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) {
  check(MPI_Gather(sendbuf, mpi_count(count), to_mpi(d), recvbuf, mpi_count(count), to_mpi(d), root,
                   MPI_COMM_WORLD),
        "MPI_Gather");
}

void MpiBackend::scatter(const void *sendbuf, void *recvbuf, size_t count, Dtype d, int root) {
  check(MPI_Scatter(sendbuf, mpi_count(count), to_mpi(d), recvbuf, mpi_count(count), to_mpi(d),
                    root, MPI_COMM_WORLD),
        "MPI_Scatter");
}

}  // namespace braid_bench
