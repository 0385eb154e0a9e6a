#include "api/comm_object.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "error.hpp"
#include "log.hpp"
#include "reduce/dtype.hpp"

namespace braid::detail {
namespace {

size_t checked_bytes(braid_comm_s &comm, const char *what, size_t count, int dtype) {
  if (!coll::dtype_valid(dtype))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": unknown dtype ", dtype);
  const size_t es = coll::dtype_size(static_cast<braid_dtype_t>(dtype));
  if (count > SIZE_MAX / es)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": count ", count, " of ",
         coll::dtype_name(static_cast<braid_dtype_t>(dtype)), " overflows size_t");
  return count * es;
}

// Records the call for the control plane (what the other ranks are told when they ask), after
// refusing to start anything once a rank is known to be gone: it could never complete.
void publish(braid_comm_s &comm, const coll::CallLabel &label, const coll::CollArgs &args) {
  if (!comm.control) return;
  comm.scheduler->check_peers();
  if (comm.control->failed())
    fail(BRAID_ERR_PEER_FAILED, label.str(), ": ", comm.control->failure_text());
  if (!comm.scheduler->out_of_step().empty())
    fail(BRAID_ERR_MISMATCH, label.str(), ": ", comm.scheduler->out_of_step());
  // A disagreement reported about this very call before this rank reached it.
  if (comm.control->notice_generation() != 0)
    if (auto text = comm.control->notice_for(label.seq))
      fail(BRAID_ERR_MISMATCH, label.str(), ": ", *text);
  comm.control->calls().publish(label.seq, static_cast<uint32_t>(args.kind), args.count,
                                static_cast<int32_t>(args.dtype), static_cast<int32_t>(args.op),
                                args.root, label.algorithm);
}

// A call with nothing to send still takes its sequence number and is published, so a rank
// that passed 0 elements where the others passed more is named in their mismatch error.
std::shared_ptr<coll::Collective> empty_call(braid_comm_s &comm, const coll::CollArgs &args) {
  if (comm.size == 1) return nullptr;
  const coll::CallLabel label{args.kind, comm.next_seq++, "", comm.rank, comm.size, 0};
  publish(comm, label, args);
  return nullptr;
}

std::shared_ptr<coll::Collective> launch(braid_comm_s &comm, coll::CollArgs args) {
  const coll::Topology &where = comm.node->topology;
  braid_comm_s::LastChoice &last = comm.last_choice;
  if (last.kind != args.kind || last.bytes != args.bytes() || last.count != args.count) {
    last.choice = comm.selection.choose(args.kind, args.bytes(), args.count, where);
    last.inner = last.choice.algorithm->takes_inner
                     ? comm.selection.choose_among_leaders(args.kind, args.bytes(), args.count,
                                                           where)
                     : coll::Choice{};
    last.kind = args.kind;
    last.bytes = args.bytes();
    last.count = args.count;
  }
  const coll::Choice &choice = last.choice;
  args.segment_bytes = choice.segment_bytes;
  if (last.inner.algorithm != nullptr) {
    args.inner = last.inner.algorithm->fn;
    args.inner_segment_bytes = last.inner.segment_bytes;
  }
  const uint64_t seq = comm.next_seq++;
  const coll::CallLabel label{args.kind, seq,       choice.algorithm->name,
                              comm.rank, comm.size, args.bytes()};
  if (log_threshold() >= LogLevel::trace)
    log(LogLevel::trace, label.str(), " selected by ", coll::describe(choice));
  publish(comm, label, args);
  return comm.scheduler->start(label, choice.algorithm->fn, args, seq);
}

// Cores this process may run on (its affinity mask), not the machine's total: a job bound to
// fewer cores is oversubscribed sooner.
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

// Ranks competing for this rank's cores: braidrun's BRAID_BIND_SHARERS when it bound the rank
// (a rank bound to a core of its own has one usable core and is still not oversubscribed),
// else every rank on the host.
bool oversubscribed(int local_size) {
  const char *sharers = std::getenv("BRAID_BIND_SHARERS");
  const int n = sharers ? std::atoi(sharers) : 0;
  return (n > 0 ? n : local_size) > usable_cores();
}

}  // namespace

std::unique_ptr<braid_comm_s> create_comm(const EnvLookup &env) {
  auto comm = std::make_unique<braid_comm_s>();
  comm->selection = coll::SelectionTable::defaults();
  // Overrides are validated before any network activity, so a typo fails fast on every rank.
  comm->selection.set_overrides_from_environment();
  comm->world = create_world(env);
  const EnvConfig &config = comm->world->config;
  comm->rank = config.rank;
  comm->size = config.size;
  // The node map uses the bootstrap, so it comes before the control plane takes its connections.
  comm->node = setup_node(*comm->world->bootstrap, config, env, comm->world->numa_node);
  // Ranks on this node: what the node map found (BRAID_LOCAL_SIZE may not be set).
  const int local = std::max(config.local_size, comm->node->map.local_size());
  comm->scheduler = std::make_unique<coll::Scheduler>(
      *comm->world->transport, comm->rank, comm->size, config.timeout_s, oversubscribed(local),
      comm->world->numa_node, comm->node->channel.get());
  if (std::optional<bs::Star> star = comm->world->bootstrap->take_star()) {
    comm->control = std::make_unique<ControlPlane>(std::move(*star), comm->rank, comm->size);
    comm->watch = std::make_unique<ControlWatch>(*comm->control);
    comm->scheduler->set_watch(comm->watch.get());
  }
  return comm;
}

std::shared_ptr<coll::Collective> start_allreduce(braid_comm_s &comm, const void *sendbuf,
                                                  void *recvbuf, size_t count, int dtype, int op) {
  const size_t bytes = checked_bytes(comm, "allreduce", count, dtype);
  if (!coll::op_valid(op))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": allreduce: unknown op ", op);
  if (count == 0) {
    coll::CollArgs args;
    args.kind = coll::CollKind::allreduce;
    args.dtype = static_cast<braid_dtype_t>(dtype);
    args.op = static_cast<braid_op_t>(op);
    return empty_call(comm, args);
  }
  if (sendbuf == nullptr || recvbuf == nullptr)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank,
         ": allreduce: ", sendbuf == nullptr ? "sendbuf" : "recvbuf", " is NULL with count ",
         count);
  const auto *s = static_cast<const char *>(sendbuf);
  const auto *r = static_cast<const char *>(recvbuf);
  if (s != r && s < r + bytes && r < s + bytes)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank,
         ": allreduce: sendbuf and recvbuf overlap without being equal (", bytes, " bytes)");
  coll::CollArgs args;
  args.kind = coll::CollKind::allreduce;
  args.sendbuf = sendbuf;
  args.recvbuf = recvbuf;
  args.count = count;
  args.dtype = static_cast<braid_dtype_t>(dtype);
  args.op = static_cast<braid_op_t>(op);
  args.elem_size = coll::dtype_size(args.dtype);
  if (comm.size == 1) {
    if (s != r) std::memcpy(recvbuf, sendbuf, bytes);
    return nullptr;
  }
  return launch(comm, args);
}

std::shared_ptr<coll::Collective> start_broadcast(braid_comm_s &comm, void *buf, size_t count,
                                                  int dtype, int root) {
  checked_bytes(comm, "broadcast", count, dtype);
  if (root < 0 || root >= comm.size)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": broadcast: root ", root,
         " is out of range [0, ", comm.size, ")");
  if (count == 0) {
    coll::CollArgs args;
    args.kind = coll::CollKind::broadcast;
    args.dtype = static_cast<braid_dtype_t>(dtype);
    args.root = root;
    return empty_call(comm, args);
  }
  if (buf == nullptr)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": broadcast: buf is NULL with count ",
         count);
  if (comm.size == 1) return nullptr;
  coll::CollArgs args;
  args.kind = coll::CollKind::broadcast;
  args.sendbuf = buf;
  args.recvbuf = buf;
  args.count = count;
  args.dtype = static_cast<braid_dtype_t>(dtype);
  args.root = root;
  args.elem_size = coll::dtype_size(args.dtype);
  return launch(comm, args);
}

std::shared_ptr<coll::Collective> start_barrier(braid_comm_s &comm) {
  if (comm.size == 1) return nullptr;
  coll::CollArgs args;
  args.kind = coll::CollKind::barrier;
  return launch(comm, args);
}

void finish(braid_comm_s &comm, const std::shared_ptr<coll::Collective> &c) {
  if (!c) return;
  comm.scheduler->wait(*c);
  if (c->result() != BRAID_SUCCESS) throw Failure(c->result(), c->message());
}

}  // namespace braid::detail
