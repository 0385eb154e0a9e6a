// The library's process-wide state: whether braid takes calls, the attribute that ties a braid
// communicator to each MPI communicator it mirrors, the call counters and the report.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "interpose.hpp"

namespace braid::mpi {
namespace {

// What hangs on a mirrored MPI communicator as its attribute. A communicator MPI duplicated
// (MPI_Comm_idup, and MPI_Comm_dup until its wrapper mirrors it) gets, through the keyval's copy
// callback, a Mirror with no braid communicator yet and its parent's Mirror: braid dups the
// parent's at the communicator's first blocking collective, where every member is (braid's dup
// is blocking, so MPI_Comm_idup itself cannot make it). A Mirror lives while its attribute or a
// pending child refers to it, so a parent freed first keeps its braid communicator for them.
struct Mirror {
  braid_comm_t comm = nullptr;
  Mirror *parent = nullptr;  // pending: whose dup this is (a reference held)
  int refs = 1;
};

struct State {
  bool enabled = false;
  bool stopped = false;
  bool off = false;  // BRAID_MPI=off
  bool log_passes = false;
  bool lazy_dups = true;  // not under MPI_THREAD_MULTIPLE (see start())
  int keyval = MPI_KEYVAL_INVALID;
  std::atomic<uint64_t> total[kColls] = {};
  std::atomic<uint64_t> taken[kColls] = {};
  std::mutex log_mutex;
  std::set<std::pair<int, std::string>> logged;
};

State &state() {
  static State s;
  return s;
}

// Drops one reference; the last frees the braid communicator (after stop(), braid_finalize
// already has) and the reference to the parent.
void release(Mirror *m) {
  while (m != nullptr && --m->refs == 0) {
    if (m->comm != nullptr && !state().stopped) braid_comm_free(&m->comm);
    Mirror *parent = m->parent;
    delete m;
    m = parent;
  }
}

// MPI frees a communicator's attribute with the communicator (MPI_Comm_free), MPI_COMM_WORLD's
// in stop().
int delete_mirror(MPI_Comm, int, void *value, void *) {
  release(static_cast<Mirror *>(value));
  return MPI_SUCCESS;
}

// MPI duplicating a mirrored communicator: the copy is marked as a pending dup of it.
int copy_mirror(MPI_Comm, int, void *, void *value_in, void *value_out, int *flag) {
  auto *parent = static_cast<Mirror *>(value_in);
  const bool gave_up = parent->comm == nullptr && parent->parent == nullptr;
  if (!state().lazy_dups || state().stopped || gave_up) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  ++parent->refs;
  auto *m = new Mirror;
  m->parent = parent;
  *static_cast<Mirror **>(value_out) = m;
  *flag = 1;
  return MPI_SUCCESS;
}

Mirror *attribute_of(MPI_Comm comm) {
  void *value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, state().keyval, &value, &found) != MPI_SUCCESS || !found)
    return nullptr;
  return static_cast<Mirror *>(value);
}

// braid's dup of m's parent (made first if it is pending too: a dup of a dup has the same
// members), or null. Every member of `agree_on` calls it at the same point.
braid_comm_t make_pending(Mirror *m, MPI_Comm agree_on) {
  if (m->comm != nullptr || m->parent == nullptr) return m->comm;
  braid_comm_t parent = make_pending(m->parent, agree_on);
  braid_comm_t child = nullptr;
  if (parent != nullptr && braid_comm_dup(parent, &child) != BRAID_SUCCESS) child = nullptr;
  int mine = child != nullptr, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, agree_on);
  if (!all && child != nullptr) braid_comm_free(&child);
  m->comm = all ? child : nullptr;
  if (m->comm != nullptr) {
    release(m->parent);  // made: the parent is no longer needed
    m->parent = nullptr;
  }
  return m->comm;
}

bool env_is(const char *name, const char *value) {
  const char *v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

void report() {
  State &s = state();
  uint64_t mine[2 * kColls], all[2 * kColls];
  for (int i = 0; i < kColls; ++i) {
    mine[i] = s.taken[i].load(std::memory_order_relaxed);
    mine[kColls + i] = s.total[i].load(std::memory_order_relaxed);
  }
  PMPI_Reduce(mine, all, 2 * kColls, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  std::string line = "braid-mpi:";
  for (int i = 0; i < kColls; ++i)
    if (all[kColls + i] > 0)
      line += " " + std::string(coll_name(static_cast<Coll>(i))) + "=" + std::to_string(all[i]) +
              "/" + std::to_string(all[kColls + i]);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

const char *coll_name(Coll c) {
  static const char *const names[kColls] = {"allreduce",
                                            "bcast",
                                            "reduce",
                                            "allgather",
                                            "allgatherv",
                                            "reduce_scatter",
                                            "reduce_scatter_block",
                                            "alltoall",
                                            "alltoallv",
                                            "gather",
                                            "scatter",
                                            "barrier",
                                            "iallreduce",
                                            "ibcast"};
  return names[static_cast<int>(c)];
}

bool enabled() {
  return state().enabled;
}

braid_comm_t mirror_of(MPI_Comm comm) {
  if (!state().enabled || comm == MPI_COMM_NULL) return nullptr;
  Mirror *m = attribute_of(comm);
  if (m == nullptr || m->comm != nullptr) return m != nullptr ? m->comm : nullptr;
  if (m->parent == nullptr) return nullptr;  // its dup failed somewhere: MPI's
  if (make_pending(m, comm) != nullptr) return m->comm;
  m->parent = (release(m->parent), nullptr);  // every member gives up alike
  return nullptr;
}

braid_comm_t mirror_for(Coll c, MPI_Comm comm) {
  if (braid_comm_t b = mirror_of(comm)) return b;
  if (!state().log_passes) return nullptr;
  int inter = 0;
  if (!state().enabled)
    note_pass(c, state().off ? "BRAID_MPI=off" : "braid did not start (see its error above)");
  else if (comm == MPI_COMM_NULL)
    note_pass(c, "MPI_COMM_NULL");
  else if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
    note_pass(c, "intercommunicator");
  else
    note_pass(c,
              "communicator braid does not mirror (MPI_COMM_SELF, MPI_Comm_create, a "
              "topology, or a dup whose mirror could not be made)");
  return nullptr;
}

bool is_mirrored(MPI_Comm comm) {
  if (!state().enabled || comm == MPI_COMM_NULL) return false;
  const Mirror *m = attribute_of(comm);
  return m != nullptr && (m->comm != nullptr || m->parent != nullptr);
}

void attach(MPI_Comm comm, braid_comm_t mine) {
  if (mine == nullptr) {
    drop_mirror(comm);
    return;
  }
  auto *m = new Mirror;
  m->comm = mine;
  PMPI_Comm_set_attr(comm, state().keyval, m);  // a pending mark there is deleted
}

void drop_mirror(MPI_Comm comm) {
  if (state().keyval != MPI_KEYVAL_INVALID && attribute_of(comm) != nullptr)
    PMPI_Comm_delete_attr(comm, state().keyval);
}

void count_call(Coll c) {
  state().total[static_cast<int>(c)].fetch_add(1, std::memory_order_relaxed);
}
void count_taken(Coll c) {
  state().taken[static_cast<int>(c)].fetch_add(1, std::memory_order_relaxed);
}

void note_pass(Coll c, const char *reason) {
  State &s = state();
  if (!s.log_passes) return;
  std::lock_guard<std::mutex> lock(s.log_mutex);
  if (!s.logged.emplace(static_cast<int>(c), reason).second) return;
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Not "braid-mpi:": that prefix is the report's alone, so a script can find its one line.
  std::fprintf(stderr, "[rank %d] braid-mpi info: %s passed to MPI: %s\n", rank, coll_name(c),
               reason);
}

bool valid_root(Coll c, int root, braid_comm_t b) {
  if (root >= 0 && root < braid_comm_size(b)) return true;
  note_pass(c, "root out of range (MPI reports it)");
  return false;
}

int fail(MPI_Comm comm, braid_result_t rc, const char *call) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "[rank %d] braid-mpi error: %s failed in braid (%s): %s\n", rank, call,
               braid_strerror(rc), braid_last_error());
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;  // the handler returned: MPI_ERRORS_RETURN
}

namespace {

// Called by braid while a taken call waits idle: a probe drives MPI's progress engine, so the
// program's MPI traffic in flight (a large Isend, a non-blocking collective MPI runs, a
// passive-target access to this rank's window) keeps moving, as it would inside MPI's own
// collective. Without it a peer waiting in MPI for that traffic never entered braid's call.
void drive_mpi(void *) {
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

}  // namespace

void start(int provided) {
  // braid serves different communicators from different threads as MPI does. A pending dup is
  // made over its parent at its first collective: with threads using the parent at the same
  // time, the ranks could order the two differently, so MPI's dups are not mirrored then.
  State &s = state();
  s.lazy_dups = provided != MPI_THREAD_MULTIPLE;
  s.log_passes = env_is("BRAID_DEBUG", "info") || env_is("BRAID_DEBUG", "debug") ||
                 env_is("BRAID_DEBUG", "trace");
  s.off = env_is("BRAID_MPI", "off");
  if (s.off) return;
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  // Rank 0 makes the id and MPI carries it: no braidrun, no PMIx.
  struct {
    int ok;
    braid_unique_id_t id;
  } msg{};
  if (rank == 0) msg.ok = braid_get_unique_id(&msg.id) == BRAID_SUCCESS;
  if (rank == 0 && !msg.ok)
    std::fprintf(stderr, "braid-mpi error: no unique id (%s); every call goes to MPI\n",
                 braid_last_error());
  PMPI_Bcast(&msg, sizeof msg, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (!msg.ok) return;
  braid_comm_t world = nullptr;
  const braid_result_t rc = braid_comm_init_rank(&world, size, msg.id, rank);
  // Every rank must know that every other one has braid, or calls would split between them.
  int mine = rc == BRAID_SUCCESS, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (rc != BRAID_SUCCESS)
      std::fprintf(stderr,
                   "[rank %d] braid-mpi error: braid could not join (%s); every call goes to MPI\n",
                   rank, braid_last_error());
    if (world != nullptr) braid_comm_free(&world);
    return;
  }
  check_pack_format();
  PMPI_Comm_create_keyval(copy_mirror, delete_mirror, &s.keyval, nullptr);
  braid_set_idle_callback(drive_mpi, nullptr);
  s.enabled = true;
  attach(MPI_COMM_WORLD, world);
}

void stop() {
  State &s = state();
  if (env_is("BRAID_MPI_REPORT", "1")) report();
  if (!s.enabled) return;
  // Before MPI goes, braid_finalize frees every braid communicator, MPI_COMM_WORLD's mirror
  // included, and leaves braid's world; the mirrors' attributes are then dropped with nothing
  // left to free (delete_mirror sees `stopped`). Freeing the world's mirror first would leave
  // braid_finalize nothing to finalize (it says "braid_finalize without init").
  s.enabled = false;
  braid_set_idle_callback(nullptr, nullptr);
  braid_finalize();
  s.stopped = true;
  PMPI_Comm_delete_attr(MPI_COMM_WORLD, s.keyval);
  PMPI_Comm_free_keyval(&s.keyval);
}

}  // namespace braid::mpi
