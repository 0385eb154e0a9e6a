#include "api/comm_object.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "error.hpp"
#include "intranode/inline_call.hpp"
#include "kernels/dtype.hpp"
#include "kernels/reduce_kernels.hpp"
#include "log.hpp"

namespace braid::detail {
namespace {

// Records the call for the control plane (what the other ranks are told when they ask), after
// refusing to start anything once a rank is known to be gone: it could never complete.
void publish(Comm &comm, const coll::CallLabel &label, const coll::CollArgs &args) {
  if (!comm.watch) return;
  comm.scheduler->check_peers();
  // A disagreement reported about this very call before this rank reached it (it came late).
  // While the ranks that found it are there, the call runs as theirs did and fails the same way,
  // taking its node turn and messages with it, so the communicator stays in step for the next
  // call. Once a rank is gone it is refused with the disagreement, which is why that rank left
  // (not "rank N failed"); its peers' messages for it may still come: the communicator's
  // context id is not reused (Comm::failed).
  if (comm.watch->peer_failed()) {
    if (comm.watch->notice_generation() != 0)
      if (auto text = comm.watch->notice_for(label.seq)) {
        comm.scheduler->note_refused(label.seq);
        comm.failed = true;
        fail(BRAID_ERR_MISMATCH, label.str(), ": ", *text);
      }
    comm.failed = true;
    fail(BRAID_ERR_PEER_FAILED, label.str(), ": ", comm.watch->peer_failure());
  }
  if (!comm.scheduler->out_of_step().empty()) {
    comm.failed = true;
    fail(BRAID_ERR_MISMATCH, label.str(), ": ", comm.scheduler->out_of_step());
  }
  const coll::AgreedFields f = coll::agreed_fields(args);
  comm.calls.publish(label.seq, f.kind, f.count, f.dtype, f.op, f.root, label.algorithm);
}

}  // namespace

size_t checked_bytes(Comm &comm, const char *what, size_t count, int dtype) {
  if (!coll::dtype_valid(dtype))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": unknown dtype ", dtype);
  const size_t es = coll::dtype_size(static_cast<braid_dtype_t>(dtype));
  if (count > SIZE_MAX / es)
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": count ", count, " of ",
         coll::dtype_name(static_cast<braid_dtype_t>(dtype)), " overflows size_t");
  return count * es;
}

namespace {
struct IdleCallback {
  void (*fn)(void *);
  void *arg;
};
// Replaced ones are kept (a few bytes each): a thread may still be calling one.
std::atomic<const IdleCallback *> g_idle_callback{nullptr};
}  // namespace

void set_idle_callback(void (*fn)(void *), void *arg) {
  g_idle_callback.store(fn != nullptr ? new IdleCallback{fn, arg} : nullptr,
                        std::memory_order_release);
}

void run_idle_callback() {
  if (const IdleCallback *c = g_idle_callback.load(std::memory_order_acquire)) c->fn(c->arg);
}

void check_range(Comm &comm, const char *what, const char *name, const void *p, size_t bytes) {
  if (p != nullptr && bytes > UINTPTR_MAX - reinterpret_cast<uintptr_t>(p))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": ", what, ": ", name, " + ", bytes,
         " bytes runs past the end of the address space");
}

void reduce_alone(void *dst, const void *src, size_t count, braid_dtype_t dtype, braid_op_t op) {
  if (op == BRAID_LAND || op == BRAID_LOR || op == BRAID_LXOR) {
    // x LOR x is (x != 0), which is what one contribution gives under each of the three.
    coll::reduce(dst, src, src, count, dtype, BRAID_LOR);
    return;
  }
  if (dst != src) std::memcpy(dst, src, count * coll::dtype_size(dtype));
}

// A call with nothing to send still takes its sequence number and is published, so a rank
// that passed 0 elements where the others passed more is named in their mismatch error.
std::shared_ptr<coll::Collective> empty_call(Comm &comm, const coll::CollArgs &args) {
  if (comm.size == 1) return nullptr;
  const coll::CallLabel label{args.kind, comm.next_seq++, "", comm.rank, comm.size, 0};
  publish(comm, label, args);
  return nullptr;
}

std::shared_ptr<coll::Collective> launch(Comm &comm, coll::CollArgs args) {
  const coll::Topology &where = comm.node->topology;
  Comm::LastChoice &last = comm.last_choice[static_cast<size_t>(args.kind)];
  const coll::SelectionTable &selection = comm.process.selection;
  if (last.kind != args.kind || last.bytes != args.bytes() || last.count != args.count) {
    last.choice = selection.choose(args.kind, args.bytes(), args.count, where);
    last.inner = last.choice.algorithm->takes_inner
                     ? selection.choose_among_leaders(args.kind, args.bytes(), args.count, where)
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
  // Polls of a peer's record before the inline path hands over: a few microseconds, about
  // what a peer one call behind needs to catch up. None when ranks share cores: the peer may
  // need this core to arrive at all.
  constexpr unsigned kInlinePolls = 2048;
  if (comm.blocking_call && comm.process.inline_calls &&
      choice.algorithm->needs == coll::Span::one_node && comm.node->channel &&
      comm.scheduler->active() == 0) {
    if (coll::complete_inline(*comm.node->channel, args, seq, comm.size,
                              comm.process.oversubscribed ? 0 : kInlinePolls)) {
      comm.scheduler->note_started(seq);
      return nullptr;
    }
  }
  return comm.scheduler->start(label, choice.algorithm->fn, args, seq);
}

Comm::Comm(Process &p, std::vector<int> members_, int rank_, uint32_t context_, uint64_t tag_)
    : process(p),
      members(std::move(members_)),
      rank(rank_),
      size(static_cast<int>(members.size())),
      context(context_),
      tag(tag_) {
  // Until attach_node: no node-local path, the flat algorithms only.
  node = std::make_unique<CommNode>();
  node->topology = coll::Topology::flat(size);
  World &world = *p.world;
  // The world's members are the transport's ranks: no translation on its data path.
  const bool is_world = context == 0;
  scheduler = std::make_unique<coll::Scheduler>(
      *world.transport, rank, size, world.config.timeout_s, p.oversubscribed, world.numa_node,
      nullptr, is_world ? nullptr : members.data(), context);
  if (p.control) {
    p.control->attach(context, tag, &calls);
    watch = std::make_unique<ControlWatch>(*p.control, context, tag, members, rank);
    scheduler->set_watch(watch.get());
  }
  scheduler->set_idle_hook([this] {
    if (process.others_alive()) process.progress_others(this);
    run_idle_callback();
  });
  scheduler->set_others_hook([this] { return process.others_alive(); });
}

Comm::~Comm() {
  scheduler.reset();
  if (process.control) process.control->detach(context, &calls);
}

void Comm::attach_node(std::unique_ptr<CommNode> n) {
  node = std::move(n);
  if (node->channel && process.selection.model() != nullptr)
    node->channel->seed_copy_choice(*process.selection.model());
  scheduler->set_node(node->channel.get());
  last_choice.fill(LastChoice{});
}

std::shared_ptr<coll::Collective> start_allreduce(Comm &comm, const void *sendbuf, void *recvbuf,
                                                  size_t count, int dtype, int op) {
  const size_t bytes = checked_bytes(comm, "allreduce", count, dtype);
  if (!coll::op_valid(op))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": allreduce: unknown op ", op);
  if (const char *why =
          coll::op_dtype_problem(static_cast<braid_op_t>(op), static_cast<braid_dtype_t>(dtype)))
    fail(BRAID_ERR_INVALID_ARGUMENT, "rank ", comm.rank, ": allreduce: op ",
         coll::op_name(static_cast<braid_op_t>(op)), " on dtype ",
         coll::dtype_name(static_cast<braid_dtype_t>(dtype)), ": ", why);
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
  check_range(comm, "allreduce", "sendbuf", sendbuf, bytes);
  check_range(comm, "allreduce", "recvbuf", recvbuf, bytes);
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
    reduce_alone(recvbuf, sendbuf, count, args.dtype, args.op);
    return nullptr;
  }
  return launch(comm, args);
}

std::shared_ptr<coll::Collective> start_broadcast(Comm &comm, void *buf, size_t count, int dtype,
                                                  int root) {
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
  check_range(comm, "broadcast", "buf", buf,
              count * coll::dtype_size(static_cast<braid_dtype_t>(dtype)));
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

std::shared_ptr<coll::Collective> start_barrier(Comm &comm) {
  if (comm.size == 1) return nullptr;
  coll::CollArgs args;
  args.kind = coll::CollKind::barrier;
  return launch(comm, args);
}

void finish(Comm &comm, const std::shared_ptr<coll::Collective> &c) {
  if (!c) return;
  comm.scheduler->wait(*c);
  if (c->result() == BRAID_SUCCESS) return;
  comm.failed = true;
  throw Failure(c->result(), c->message());
}

}  // namespace braid::detail
