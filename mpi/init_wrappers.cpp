// MPI_Init, MPI_Init_thread, MPI_Finalize: braid's world is formed right after MPI's and freed
// right before it goes.
#include "interpose.hpp"

extern "C" {

int MPI_Init(int *argc, char ***argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  braid::mpi::start(provided);
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  braid::mpi::start(*provided);
  return rc;
}

int MPI_Finalize(void) {
  braid::mpi::stop();
  return PMPI_Finalize();
}

}  // extern "C"
