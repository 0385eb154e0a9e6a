// A loaded transport plugin bound to one communicator: turns the plugin's C return codes into
// Failures that carry the plugin's own message, prefixed with the local rank.
#pragma once

#include <braid/transport.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/registration_cache.hpp"

#include "plugin/plugin_loader.hpp"

namespace braid::detail {

class Bootstrap;

class Transport {
 public:
  // Calls the plugin's init collectively over `bootstrap`. `numa_node` is the node this rank is
  // bound to (-1 unknown), handed to v2 plugins with braid's topology helpers.
  Transport(Plugin plugin, Bootstrap &bootstrap, int local_rank, int local_size, double timeout_s,
            int numa_node);
  ~Transport();
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;

  const std::string &name() const { return plugin_.name; }
  const std::string &path() const { return plugin_.path; }
  const braid_transport_props_t &props() const { return props_; }

  // `mr` from registration(), or nullptr.
  braid_transport_req_t isend(int peer, uint64_t tag, const void *buf, size_t bytes,
                              braid_transport_mr_t mr = nullptr);
  braid_transport_req_t irecv(int peer, uint64_t tag, void *buf, size_t bytes,
                              braid_transport_mr_t mr = nullptr);
  // The registration of the braid-allocated region (braid_mem_alloc, scratch) holding
  // [buf, buf + bytes), made on first use; nullptr for other memory or without reg_mr.
  braid_transport_mr_t registration(const void *buf, size_t bytes) {
    if (!registrations_) return nullptr;
    auto lock = enter();
    return registrations_->lookup(buf, bytes);
  }
  // Registrations made so far (each region once per communicator) and still held.
  size_t registrations_made() const {
    return registrations_ ? registrations_->registrations_made() : 0;
  }
  size_t registrations_live() const { return registrations_ ? registrations_->live() : 0; }
  // Returns true when done (the request is then freed); throws when the request failed.
  bool test(braid_transport_req_t req, size_t *bytes);
  void progress();
  void wait(int timeout_ms);
  void cancel(braid_transport_req_t req) noexcept;
  // Gives up on a request without cancelling it: for sends of a failed collective (a plugin
  // cannot cancel a send its peer will never take and would wait out BRAID_TIMEOUT) and for
  // receives from a rank whose process is gone. The request is tested during progress() and
  // freed if it ever completes; otherwise it is left to the plugin's teardown.
  void abandon(braid_transport_req_t req) noexcept;
  std::vector<braid_transport_counter_t> counters();
  // Once set, calls come from several threads (communicators used by different threads at
  // once): wait() no longer sleeps inside the plugin, where it would hold the others up.
  void set_shared_by_threads() { shared_by_threads_.store(true, std::memory_order_relaxed); }

 private:
  [[noreturn]] void raise(int code, const char *what);
  // Takes mutex_ and first releases registrations whose regions were freed while another thread
  // was inside the plugin. Not reentrant: nothing called under it enters again, and no
  // deregistration comes up inside a call that holds it (the registration cache does not evict
  // within registration()).
  std::unique_lock<std::mutex> enter();
  void cancel_held(braid_transport_req_t req) noexcept;  // caller holds mutex_
  // One call into the plugin (caller holds mutex_); debug builds check that no other thread is
  // inside it at the same time, as the plugin ABI requires.
  template <typename F>
  int call(F &&f);
  void deregister(void *mr);  // caller holds mutex_

  Plugin plugin_;
  const braid_transport_v1_t *ops_;
  // Plugins serve one caller at a time (UCX worker in single-thread mode; verbs queues):
  // every call into the plugin holds this. Only the region registry's and the registration
  // cache's locks are taken under it. A plain mutex, not a recursive one: taking and giving
  // back the recursive one was about 850 of the 10,000 instructions an 8 B broadcast and a
  // barrier of 2 ranks ran over the transport (callgrind, in the guest), the plain one 610.
  mutable std::mutex mutex_;
  std::atomic<bool> shared_by_threads_{false};
  // braid_mem_free releases its region's registration from whatever thread frees it, under the
  // region registry's lock, which a caller holding mutex_ may be waiting for (registration()):
  // so it never waits for mutex_. When another thread holds it, the handle waits here for that
  // thread's next call.
  std::mutex deferred_mutex_;  // a leaf: nothing is locked under it
  std::vector<void *> deferred_deregs_;
  std::atomic<bool> has_deferred_{false};
  std::atomic<int> callers_{0};  // threads inside the plugin (debug builds check it stays <= 1)
  braid_transport_ctx_t ctx_ = nullptr;
  braid_transport_props_t props_{};
  char err_[1024] = {0};
  std::vector<braid_transport_req_t> abandoned_;
  // Declared last: destroyed first, while the plugin context still exists.
  std::unique_ptr<RegistrationCache> registrations_;
};

}  // namespace braid::detail
