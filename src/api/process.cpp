#include "api/process.hpp"

#include <algorithm>

#include "api/comm_node.hpp"
#include "api/comm_object.hpp"
#include "api/model_setup.hpp"
#include "log.hpp"
#include "node/home_cpu.hpp"

namespace braid::detail {
namespace {

// Every process context alive, for progress_others. Never destroyed: a Process held by a
// static (braid_init's) may be destroyed after this file's statics at exit.
struct Registry {
  std::mutex mutex;
  std::vector<Process *> all;  // guarded by mutex
  std::atomic<size_t> count{0};
};
Registry &registry() {
  static auto *r = new Registry;
  return *r;
}

}  // namespace

Process::Process() {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.all.push_back(this);
  r.count.store(r.all.size(), std::memory_order_relaxed);
}

bool Process::others_alive() const {
  return live_comms.load(std::memory_order_relaxed) > 1 ||
         registry().count.load(std::memory_order_relaxed) > 1;
}

void Process::progress_others(const Comm *except) {
  Registry &r = registry();
  // Another thread walking them already progresses them all: this one goes back to its own
  // call rather than waiting (a walk may wait in a diagnosis).
  std::unique_lock all(r.mutex, std::try_to_lock);
  if (!all.owns_lock()) return;
  for (Process *p : r.all) {
    // One still being built has no communicator (nor, before that, a transport).
    if (p->live_comms.load(std::memory_order_relaxed) == 0) continue;
    // Another context's transport may be driven by another thread too.
    if (p != this) p->note_thread();
    std::lock_guard lock(p->mutex);
    for (const std::unique_ptr<Comm> &c : p->comms) {
      // Only a communicator no thread is using now: its owner may be in a call on it.
      if (c.get() == except || !c->try_claim()) continue;
      if (c->scheduler->active() > 0) c->scheduler->progress();
      c->release();
    }
  }
}

Comm &Process::add(std::unique_ptr<Comm> comm) {
  std::lock_guard lock(mutex);
  comms.push_back(std::move(comm));
  live_comms.store(comms.size(), std::memory_order_relaxed);
  return *comms.back();
}

bool Process::reserve_context(size_t id) {
  std::lock_guard lock(mutex);
  if (id >= used_contexts.size() || used_contexts.test(id)) return false;
  used_contexts.set(id);
  return true;
}

void Process::release_context(size_t id) {
  std::lock_guard lock(mutex);
  used_contexts.reset(id);
}

std::vector<uint8_t> Process::contexts_in_use() {
  std::lock_guard lock(mutex);
  std::vector<uint8_t> used(used_contexts.size());
  for (size_t i = 0; i < used.size(); ++i) used[i] = used_contexts.test(i) ? 1 : 0;
  return used;
}

void Process::destroy(Comm *comm) {
  std::unique_ptr<Comm> doomed;
  {
    std::lock_guard lock(mutex);
    if (!comm->failed) used_contexts.reset(comm->context);
    for (std::unique_ptr<Comm> &c : comms)
      if (c.get() == comm) doomed = std::move(c);
    std::erase(comms, nullptr);
    live_comms.store(comms.size(), std::memory_order_relaxed);
  }
  // Torn down outside the lock: cancelling its requests talks to the transport.
  doomed.reset();
}

void Process::mark_threaded() {
  threaded_.store(true, std::memory_order_relaxed);
  world->transport->set_shared_by_threads();
}

Process::~Process() {
  {
    Registry &r = registry();
    std::lock_guard lock(r.mutex);
    std::erase(r.all, this);
    r.count.store(r.all.size(), std::memory_order_relaxed);
  }
  // Children before the world, newest first: nothing refers to a communicator made later.
  while (!comms.empty()) comms.pop_back();
}

namespace {

// The selection table with the environment's overrides, and the cost model's mode and
// profile, validated before any network activity (before the job source is even looked for),
// so a typo fails fast on every rank.
struct SelectionRequest {
  coll::SelectionTable table;
  ModelRequest model;
};
SelectionRequest selection_from_environment() {
  SelectionRequest r{coll::SelectionTable::defaults(), model_request_from_environment()};
  r.table.set_overrides_from_environment();
  return r;
}

std::unique_ptr<Process> build_process(std::unique_ptr<JobSource> source, const EnvLookup &env,
                                       SelectionRequest selection);

}  // namespace

std::unique_ptr<Process> create_process(const EnvLookup &env) {
  SelectionRequest selection = selection_from_environment();
  return build_process(find_job_source(env), env, std::move(selection));
}

std::unique_ptr<Process> create_process(std::unique_ptr<JobSource> source, const EnvLookup &env) {
  return build_process(std::move(source), env, selection_from_environment());
}

namespace {

std::unique_ptr<Process> build_process(std::unique_ptr<JobSource> source, const EnvLookup &env,
                                       SelectionRequest selection) {
  auto p = std::make_unique<Process>();
  p->selection = std::move(selection.table);
  p->world = create_world(std::move(source));
  {
    const braid_transport_props_t &props = p->world->transport->props();
    agree_on_model(*p->world->bootstrap, selection.model, p->selection, props.latency_us,
                   props.bandwidth_gbps);
  }
  const EnvConfig &config = p->world->config;
  // Which ranks share a node uses the bootstrap, so it comes before the control plane takes
  // the bootstrap's connections.
  p->nodes = discover_nodes(*p->world->bootstrap, config, env);
  p->oversubscribed = p->nodes.oversubscribed;
  p->inline_calls = switch_on(env, "BRAID_INLINE");
  log(LogLevel::info,
      p->oversubscribed
          ? "idle waits yield at once: more ranks share this rank's CPUs than there are CPUs"
          : "idle waits spin before they yield: this rank's CPUs are not oversubscribed");
  if (p->nodes.home_cpu >= 0)
    log(LogLevel::info, "after a long wait this rank returns to CPU ", p->nodes.home_cpu,
        " (it shares an unbound mask with more ranks than CPUs; BRAID_HOME_CPU=off: the "
        "kernel places it)");
  std::vector<int> everyone(static_cast<size_t>(config.size));
  for (int r = 0; r < config.size; ++r) everyone[static_cast<size_t>(r)] = r;
  Bootstrap &bootstrap = *p->world->bootstrap;
  std::unique_ptr<CommNode> node =
      setup_comm_node(p->nodes, nullptr, nullptr, everyone, config.rank, 0, config.job_key,
                      p->world->numa_node, [&](bool ok) { return all_agree(bootstrap, ok); });
  // The control plane takes the bootstrap's connections over: the world's node setup, which
  // agrees over the bootstrap, comes first.
  if (std::optional<bs::Star> star = bootstrap.take_star())
    p->control = std::make_unique<ControlPlane>(std::move(*star), config.rank, config.size);
  p->used_contexts.set(0);
  p->add(std::make_unique<Comm>(*p, std::move(everyone), config.rank, 0));
  p->node_pool = node->region.pool();
  p->world_node_map = node->map;
  p->world_comm().attach_node(std::move(node));
  // Start from the home CPU too: the bootstrap's waits slept, and the first calls may not. A
  // thread that already has one (its world, or an earlier unique-id group) keeps it: homes
  // dealt in another group's rank order could put two ranks on one CPU.
  if (home_cpu() < 0) set_home_cpu(p->nodes.home_cpu);
  return_home();
  return p;
}

}  // namespace

}  // namespace braid::detail
