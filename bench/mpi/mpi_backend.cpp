#include "mpi_backend.hpp"

#include <climits>
#include <stdexcept>

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
    case Dtype::float16:
    case Dtype::bfloat16:
      return MPI_UINT16_T;  // bits only: broadcast, never reduced (mpi_unsupported)
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

}  // namespace

std::optional<std::string> mpi_unsupported(Collective c, Dtype d) {
  if (c == Collective::allreduce && (d == Dtype::float16 || d == Dtype::bfloat16))
    return cat("MPI has no ", name(d),
               " reduction (MPI_Allreduce cannot reduce it); use another --dtype");
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

}  // namespace braid_bench
