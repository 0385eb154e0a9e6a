// The UCX plugin's per-communicator state: one UCP context and worker, one endpoint per peer.
#pragma once

#include <braid/braid.h>
#include <braid/transport.h>
#include <ucp/api/ucp.h>

#include "common/plugin_support.hpp"

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace braid::ucx {

// UCP tags carry the sender's rank in the low bits so a receive can name its peer: UCP's tag
// matching does not know about sources.
constexpr unsigned kRankBits = 20;  // 1M ranks; the other 44 bits are braid's tag
constexpr unsigned kTagBits = 64 - kRankBits;
inline uint64_t ucp_tag_for(uint64_t tag, int src) {
  return (tag << kRankBits) | static_cast<uint64_t>(src);
}

struct Counters {
  uint64_t sends = 0, recvs = 0, bytes_sent = 0, bytes_received = 0, cancels = 0;
};

struct Context;
// Argument of one endpoint's error handler; owned by the context so it outlives the endpoint.
struct PeerRef {
  Context *ctx;
  int peer;
};

struct Request;

struct Context : plugin::Reporter {
  int rank = 0;
  int size = 0;
  double timeout_s = 0;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  std::vector<ucp_ep_h> eps;
  std::vector<ucs_status_t> peer_status;  // set by the endpoint error handler
  std::vector<std::unique_ptr<PeerRef>> peer_refs;
  int event_fd = -1;
  bool peer_errors = false;  // UCP_ERR_HANDLING_MODE_PEER (BRAID_UCX_PEER_ERRORS=1)
  std::string device;
  Counters counters;
  // Every request handed out and not yet freed. One braid abandoned (a send or receive to a
  // rank that died) is never tested again; its struct is freed here at finalize, after the
  // worker is gone and no completion callback can run.
  std::unordered_set<Request *> live;
};

int context_create(const braid_transport_init_args_t *args, Context **out);
void context_destroy(Context *ctx);

}  // namespace braid::ucx
