// Fortran programs under Open MPI. Its Fortran bindings (mpif.h, `use mpi`: mpi_allreduce_ and
// the other manglings in libmpi_mpifh; `use mpi_f08`: ompi_allreduce_f, which the f08 module
// calls) go to PMPI_* directly, so the C wrappers never see a Fortran program's calls, and not
// even its MPI_Init. Here every mangling and the ompi_*_f entry point are defined: handles are
// converted (MPI_*_f2c), Fortran's MPI_IN_PLACE and MPI_BOTTOM (addresses of Open MPI's common
// blocks) become C's, and the C wrappers do the rest. MPICH's Fortran bindings call the C MPI_*
// functions themselves (with handles and MPI_IN_PLACE already converted), so the MPICH build
// needs none of this.
#include <mpi.h>

#ifdef OPEN_MPI

namespace {

// Open MPI's Fortran MPI_IN_PLACE and MPI_BOTTOM: common blocks in libmpi, one per mangling
// (gfortran's is the one with one underscore; another compiler's program, or the f08 module,
// may name another), each a variable of its own.
extern "C" int mpi_fortran_in_place __attribute__((weak));
extern "C" int mpi_fortran_in_place_ __attribute__((weak));
extern "C" int mpi_fortran_in_place__ __attribute__((weak));
extern "C" int MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern "C" int mpi_fortran_bottom __attribute__((weak));
extern "C" int mpi_fortran_bottom_ __attribute__((weak));
extern "C" int mpi_fortran_bottom__ __attribute__((weak));
extern "C" int MPI_FORTRAN_BOTTOM __attribute__((weak));

bool is_one_of(const void *p, const int *a, const int *b, const int *c, const int *d) {
  return p == a || p == b || p == c || p == d;
}

void *c_buffer(void *p) {
  if (p == nullptr) return p;
  if (is_one_of(p, &mpi_fortran_in_place, &mpi_fortran_in_place_, &mpi_fortran_in_place__,
                &MPI_FORTRAN_IN_PLACE))
    return MPI_IN_PLACE;
  if (is_one_of(p, &mpi_fortran_bottom, &mpi_fortran_bottom_, &mpi_fortran_bottom__,
                &MPI_FORTRAN_BOTTOM))
    return MPI_BOTTOM;
  return p;
}
MPI_Comm comm_of(const MPI_Fint *f) {
  return PMPI_Comm_f2c(*f);
}
MPI_Datatype type_of(const MPI_Fint *f) {
  return PMPI_Type_f2c(*f);
}
MPI_Op op_of(const MPI_Fint *f) {
  return PMPI_Op_f2c(*f);
}
void set(MPI_Fint *ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);
}
// Fortran integer arrays as C int arrays (MPI_Fint is int in Debian's Open MPI: no copy).
const int *ints(const MPI_Fint *a) {
  static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is not int: convert the arrays");
  return reinterpret_cast<const int *>(a);
}

}  // namespace

// Defines ompi_<lower>_f and the manglings: <lower>, <lower>_, <lower>__, <UPPER>.
#define BRAID_FORTRAN(lower, UPPER, params)                                           \
  extern "C" void ompi_##lower##_f params;                                            \
  extern "C" void mpi_##lower params __attribute__((alias("ompi_" #lower "_f")));     \
  extern "C" void mpi_##lower##_ params __attribute__((alias("ompi_" #lower "_f")));  \
  extern "C" void mpi_##lower##__ params __attribute__((alias("ompi_" #lower "_f"))); \
  extern "C" void MPI_##UPPER params __attribute__((alias("ompi_" #lower "_f")));     \
  extern "C" void ompi_##lower##_f params

BRAID_FORTRAN(init, INIT, (MPI_Fint * ierr)) {
  set(ierr, MPI_Init(nullptr, nullptr));
}

BRAID_FORTRAN(init_thread, INIT_THREAD, (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr)) {
  int got = MPI_THREAD_SINGLE;
  set(ierr, MPI_Init_thread(nullptr, nullptr, static_cast<int>(*required), &got));
  *provided = static_cast<MPI_Fint>(got);
}

BRAID_FORTRAN(finalize, FINALIZE, (MPI_Fint * ierr)) {
  set(ierr, MPI_Finalize());
}

BRAID_FORTRAN(comm_dup, COMM_DUP, (MPI_Fint * comm, MPI_Fint *newcomm, MPI_Fint *ierr)) {
  MPI_Comm made = MPI_COMM_NULL;
  set(ierr, MPI_Comm_dup(comm_of(comm), &made));
  *newcomm = PMPI_Comm_c2f(made);
}

BRAID_FORTRAN(comm_split, COMM_SPLIT,
              (MPI_Fint * comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm,
               MPI_Fint *ierr)) {
  MPI_Comm made = MPI_COMM_NULL;
  set(ierr, MPI_Comm_split(comm_of(comm), static_cast<int>(*color), static_cast<int>(*key), &made));
  *newcomm = PMPI_Comm_c2f(made);
}

BRAID_FORTRAN(comm_split_type, COMM_SPLIT_TYPE,
              (MPI_Fint * comm, MPI_Fint *split_type, MPI_Fint *key, MPI_Fint *info,
               MPI_Fint *newcomm, MPI_Fint *ierr)) {
  MPI_Comm made = MPI_COMM_NULL;
  set(ierr, MPI_Comm_split_type(comm_of(comm), static_cast<int>(*split_type),
                                static_cast<int>(*key), PMPI_Info_f2c(*info), &made));
  *newcomm = PMPI_Comm_c2f(made);
}

BRAID_FORTRAN(barrier, BARRIER, (MPI_Fint * comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Barrier(comm_of(comm)));
}

BRAID_FORTRAN(allreduce, ALLREDUCE,
              (char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Allreduce(c_buffer(sendbuf), c_buffer(recvbuf), static_cast<int>(*count),
                          type_of(datatype), op_of(op), comm_of(comm)));
}

BRAID_FORTRAN(reduce, REDUCE,
              (char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
               MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Reduce(c_buffer(sendbuf), c_buffer(recvbuf), static_cast<int>(*count),
                       type_of(datatype), op_of(op), static_cast<int>(*root), comm_of(comm)));
}

BRAID_FORTRAN(reduce_scatter_block, REDUCE_SCATTER_BLOCK,
              (char *sendbuf, char *recvbuf, MPI_Fint *recvcount, MPI_Fint *datatype, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr,
      MPI_Reduce_scatter_block(c_buffer(sendbuf), c_buffer(recvbuf), static_cast<int>(*recvcount),
                               type_of(datatype), op_of(op), comm_of(comm)));
}

BRAID_FORTRAN(reduce_scatter, REDUCE_SCATTER,
              (char *sendbuf, char *recvbuf, MPI_Fint *recvcounts, MPI_Fint *datatype, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Reduce_scatter(c_buffer(sendbuf), c_buffer(recvbuf), ints(recvcounts),
                               type_of(datatype), op_of(op), comm_of(comm)));
}

BRAID_FORTRAN(bcast, BCAST,
              (char *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *ierr)) {
  set(ierr, MPI_Bcast(c_buffer(buffer), static_cast<int>(*count), type_of(datatype),
                      static_cast<int>(*root), comm_of(comm)));
}

BRAID_FORTRAN(allgather, ALLGATHER,
              (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf,
               MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Allgather(c_buffer(sendbuf), static_cast<int>(*sendcount), type_of(sendtype),
                          c_buffer(recvbuf), static_cast<int>(*recvcount), type_of(recvtype),
                          comm_of(comm)));
}

BRAID_FORTRAN(allgatherv, ALLGATHERV,
              (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf,
               MPI_Fint *recvcounts, MPI_Fint *displs, MPI_Fint *recvtype, MPI_Fint *comm,
               MPI_Fint *ierr)) {
  set(ierr, MPI_Allgatherv(c_buffer(sendbuf), static_cast<int>(*sendcount), type_of(sendtype),
                           c_buffer(recvbuf), ints(recvcounts), ints(displs), type_of(recvtype),
                           comm_of(comm)));
}

BRAID_FORTRAN(alltoall, ALLTOALL,
              (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf,
               MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Alltoall(c_buffer(sendbuf), static_cast<int>(*sendcount), type_of(sendtype),
                         c_buffer(recvbuf), static_cast<int>(*recvcount), type_of(recvtype),
                         comm_of(comm)));
}

BRAID_FORTRAN(alltoallv, ALLTOALLV,
              (char *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtype,
               char *recvbuf, MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtype,
               MPI_Fint *comm, MPI_Fint *ierr)) {
  set(ierr, MPI_Alltoallv(c_buffer(sendbuf), ints(sendcounts), ints(sdispls), type_of(sendtype),
                          c_buffer(recvbuf), ints(recvcounts), ints(rdispls), type_of(recvtype),
                          comm_of(comm)));
}

BRAID_FORTRAN(gather, GATHER,
              (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf,
               MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *ierr)) {
  set(ierr, MPI_Gather(c_buffer(sendbuf), static_cast<int>(*sendcount), type_of(sendtype),
                       c_buffer(recvbuf), static_cast<int>(*recvcount), type_of(recvtype),
                       static_cast<int>(*root), comm_of(comm)));
}

BRAID_FORTRAN(scatter, SCATTER,
              (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf,
               MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *ierr)) {
  set(ierr, MPI_Scatter(c_buffer(sendbuf), static_cast<int>(*sendcount), type_of(sendtype),
                        c_buffer(recvbuf), static_cast<int>(*recvcount), type_of(recvtype),
                        static_cast<int>(*root), comm_of(comm)));
}

BRAID_FORTRAN(iallreduce, IALLREDUCE,
              (char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op,
               MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)) {
  MPI_Request req = MPI_REQUEST_NULL;
  set(ierr, MPI_Iallreduce(c_buffer(sendbuf), c_buffer(recvbuf), static_cast<int>(*count),
                           type_of(datatype), op_of(op), comm_of(comm), &req));
  *request = PMPI_Request_c2f(req);
}

BRAID_FORTRAN(ibcast, IBCAST,
              (char *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root, MPI_Fint *comm,
               MPI_Fint *request, MPI_Fint *ierr)) {
  MPI_Request req = MPI_REQUEST_NULL;
  set(ierr, MPI_Ibcast(c_buffer(buffer), static_cast<int>(*count), type_of(datatype),
                       static_cast<int>(*root), comm_of(comm), &req));
  *request = PMPI_Request_c2f(req);
}

#endif  // OPEN_MPI
