// The verbs plugin's per-communicator state: one device context, protection domain and
// completion queue; per size class a receive arena (and an SRQ for shared classes) and a pool of
// send bounce buffers; one RC queue pair per peer per class, each through its own rdma_cm_id.
#pragma once

#include <braid/braid.h>
#include <braid/transport.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <cstdarg>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/plugin_support.hpp"
#include "options.hpp"
#include "rcache.hpp"
#include "requests.hpp"
#include "wire.hpp"

namespace braid::verbs {

struct Counters {
  uint64_t inline_msgs = 0, inline_bytes = 0;
  uint64_t fast_inline_msgs = 0;  // of inline_msgs, posted by isend itself (try_send_inline)
  uint64_t eager_msgs = 0, eager_bytes = 0;
  uint64_t rndv_msgs = 0, rndv_bytes = 0;
  uint64_t rdma_reads = 0;
  uint64_t control_msgs = 0;  // FIN and credit messages
  uint64_t credit_msgs = 0;
  uint64_t recvs_posted = 0;
  uint64_t recv_post_retries = 0;  // lists cut short at bad_wr and posted again
  uint64_t srq_limit_events = 0;
  uint64_t srq_grows = 0;
  uint64_t credit_stalls = 0;  // sends queued for lack of credits
  uint64_t send_stalls = 0;    // sends queued for lack of bounce buffers or send queue slots
  uint64_t unexpected_msgs = 0;
  uint64_t reordered_msgs = 0;
  uint64_t recv_buffer_bytes = 0;  // registered receive memory
  uint64_t send_buffer_bytes = 0;  // registered bounce memory
  uint64_t transient_regs = 0;     // registrations made for one rendezvous
  // Eager messages straight into posted receives (direct.hpp).
  uint64_t adverts = 0;                        // posted receives advertised to their sender
  uint64_t adverts_unused = 0;                 // ... and matched by an ordinary message after all
  uint64_t direct_msgs = 0, direct_bytes = 0;  // sent as RDMA WRITEs into an advertised receive
  uint64_t retracts = 0;                       // adverts taken back for a cancel
  // Eager messages sent without a header (wire.hpp, headerless_imm); also in eager_msgs.
  uint64_t headerless_msgs = 0;
  uint64_t headerless_fallbacks = 0;  // sent with a header to carry an owed cm_ack (send.cpp)
  // Queue pairs established, and those whose RNR NAK timer was shortened (connect.cpp).
  uint64_t qps = 0, short_rnr_timer_qps = 0;
};

// A registered block of buffers.
struct Arena {
  uint8_t *base = nullptr;
  size_t bytes = 0;
  ibv_mr *mr = nullptr;
  bool numa_bound = false;  // from the core's alloc_on_node (freed with free_on_node)
};

struct ClassState {
  QueueSpec spec;
  uint32_t slot_bytes = 0;
  // Receive buffers. Per-peer: one arena, peer-major ((peer index) * count + i). Shared: one
  // arena per `count` buffers (the SRQ grows by whole arenas on limit events).
  std::vector<Arena> recv;
  ibv_srq *srq = nullptr;
  uint32_t srq_max_wr = 0;
  uint32_t srq_posted = 0;  // buffers currently posted to the SRQ
  uint32_t srq_slots = 0;   // buffers owned by the SRQ
  uint32_t srq_limit = 0;
  bool srq_grow_failed = false;  // growing failed once (locked memory): not tried again
  std::vector<uint32_t> srq_repost;
  // Send bounce buffers.
  Arena send;
  std::vector<uint32_t> send_free;

  uint8_t *recv_slot(uint32_t slot) {
    return recv[slot / spec.count].base + size_t{slot % spec.count} * slot_bytes;
  }
  uint32_t recv_lkey(uint32_t slot) { return recv[slot / spec.count].mr->lkey; }
  uint8_t *send_slot(uint32_t slot) { return send.base + size_t{slot} * slot_bytes; }
};

// Where a direct message goes: the advertised receive's buffer (direct.hpp).
struct DirectTarget {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t serial = 0;
};

// A message waiting to be posted on a connection.
struct Outgoing {
  MsgType type = MsgType::Eager;
  uint32_t msn = 0;
  uint64_t tag = 0;
  Request *req = nullptr;         // Eager / Rts
  std::vector<uint8_t> detached;  // Eager payload of a send cancelled before it was posted
  bool detached_payload = false;
  bool stalled = false;  // counted once in the stall counters
  RtsBody rts{};
  FinBody fin{};
  RetractBody retract{};  // Retract, RetractAck
  AdvertBody advert{};    // Advert
  DirectTarget direct{};  // Direct
  int delta = 0;          // Headerless: the tag minus the previous one on the wire to the peer
};

struct Conn {
  rdma_cm_id *id = nullptr;
  ibv_qp *qp = nullptr;
  int peer = -1;
  uint8_t klass = 0;
  uint32_t index = 0;
  bool established = false;
  bool per_peer = false;
  // Flow control of per-peer classes (see flow_control.hpp).
  int send_credits = 0;    // messages we may still send
  int cm_budget = 0;       // credit messages we may still send
  int pending_return = 0;  // reposted buffers whose credit the peer has not been told of
  int pending_cm_ack = 0;  // credit messages of the peer not yet acknowledged
  int sq_free = 0;
  int unsignaled = 0;  // inline sends posted unsignaled since the last signaled one
  std::deque<Outgoing> backlog;
  std::vector<uint32_t> repost;  // receive slots consumed, to be posted again
  int owed_return = 0;           // credits of `repost`, returned once they are posted again
  int owed_cm_ack = 0;           // the same for credit messages
};

// A matchable message copied out of its receive buffer (the buffer goes back to the queue at
// once, so unexpected messages never hold credits).
struct Stashed {
  MsgType type = MsgType::Eager;
  uint64_t tag = 0;
  std::vector<uint8_t> payload;
  RtsBody rts{};
  size_t direct_len = 0;  // Direct: bytes already in the advertised receive's buffer
  uint8_t serial = 0;     // Direct: low bits of the advert's serial
  // An Eager message that came without a header: its tag is the previous one from this peer
  // plus `delta`, known only once the messages before it were delivered.
  bool headerless = false;
  int delta = 0;
};

// Receive side: an advert we sent for one of our posted receives, not ended yet (direct.hpp).
struct AdvertOut {
  Request *req = nullptr;  // posted (a cancelled one stays posted until its retract settles)
  uint32_t serial = 0;
};

// Send side: a peer's advert not used yet.
struct AdvertIn {
  uint64_t tag = 0;
  uint64_t capacity = 0;
  DirectTarget target;
  uint32_t skip = 0;  // messages with this tag still to go before the one that matches it
};

constexpr size_t kSentTags = 256;  // tags of our last messages to a peer, by msn

struct PeerState {
  uint32_t next_send_msn = 0;
  uint32_t next_recv_msn = 0;
  std::map<uint32_t, Stashed> reorder;  // arrived ahead of next_recv_msn
  std::deque<Request *> posted;         // receives without a message, in posting order
  std::deque<Stashed> unexpected;       // messages without a receive, in msn order
  int failed = 0;                       // braid_result_t once the peer is gone
  std::string failure;
  // Eager messages straight into posted receives (direct.hpp). As the receiver:
  std::deque<AdvertOut> adverts_out;  // in serial order
  uint32_t next_serial = 1;
  int advert_score = 4;  // up when an advert is used, down when not; below 1, adverts pause
  uint32_t advert_probe = 0;
  bool retracting = false;
  bool retract_acked = false;
  uint32_t retract_watermark = 0;
  // As the sender:
  std::deque<AdvertIn> adverts_in;
  uint64_t sent_tags[kSentTags] = {};
  // The tag of the last message in msn order that carried one (an Eager or RTS header, or a
  // headerless message), each way: a headerless message's tag is a delta from it (wire.hpp).
  uint64_t last_sent_tag = 0, last_recv_tag = 0;
  bool sent_tag = false, recv_tag = false;
};

constexpr int kReservedCreditBuffers = 2;

struct Context : plugin::Reporter {
  int rank = 0;
  int size = 0;
  double timeout_s = 30;
  int numa_node = -1;  // where receive and bounce buffers go
  std::string numa_reason;
  void *(*alloc_on_node)(size_t, int) = nullptr;
  void (*free_on_node)(void *, size_t) = nullptr;
  Options opt;

  rdma_event_channel *channel = nullptr;
  rdma_cm_id *listen_id = nullptr;
  ibv_context *verbs = nullptr;
  ibv_pd *pd = nullptr;
  ibv_comp_channel *comp_channel = nullptr;
  ibv_cq *cq = nullptr;
  int cq_entries = 0;
  bool cq_armed = false;
  bool notify_failed = false;   // ibv_req_notify_cq failed: wait polls every millisecond instead
  unsigned progress_calls = 0;  // progress_all looks at the event fds on every 256th call
  // What the progress loop has to do besides polling the CQ, so that a spinning turn with
  // nothing to do skips it (each look costs instructions, and under emulation a spinning rank's
  // turn is part of a small message's latency).
  unsigned reposts_queued = 0;  // receive buffers consumed and not posted again yet
  unsigned repost_batch = 1;    // posted together while messages keep arriving (classes_create)
  unsigned turn_receives = 0;   // receive completions handled in this progress turn
  bool reposts_deferred = false;  // the last turn left its reposts to this one
  bool sends_to_flush = false;  // a backlog, or a per-peer connection owing credits, may have work
  bool reads_to_post = false;   // a rendezvous receive has RDMA READs not posted yet
  ibv_device_attr dev_attr{};
  ibv_port_attr port_attr{};
  uint8_t port = 1;
  std::string device_name;
  sockaddr_storage address{};
  std::string address_text;

  std::vector<ClassState> classes;
  std::vector<Conn> conns;  // peer * classes + class; the entries for our own rank are unused
  std::unordered_map<uint32_t, uint32_t> qpn_to_conn;
  std::vector<PeerState> peers;
  RequestTable requests;
  Counters counters;
  // Registrations of application buffers kept between rendezvous; null when off or unavailable
  // (rcache_off says why).
  RegCache *rcache = nullptr;
  std::string rcache_off;
  uint32_t max_inline = 0;
  size_t eager_limit = 0;
  // isend posts eager messages of up to fast_inline_max bytes itself, inline on class
  // fast_inline_class, when nothing waits ahead of them (inline_send.hpp, try_send_inline).
  bool fast_inline = false;
  uint8_t fast_inline_class = 0;
  size_t fast_inline_max = 0;
  uint64_t max_msg_sz = 0;
  bool finalizing = false;
  int fatal = 0;  // a device-wide failure (port down, CQ error)
  std::string fatal_text;

  Conn &conn(int peer, int klass) {
    return conns[static_cast<size_t>(peer) * classes.size() + static_cast<size_t>(klass)];
  }
  uint32_t peer_slot_index(int peer) const {  // peers without ourselves, for per-peer arenas
    return static_cast<uint32_t>(peer < rank ? peer : peer - 1);
  }
};

int context_create(const braid_transport_init_args_t *args, Context **out);
void context_destroy(Context *ctx);

// Marks `peer` failed: its queued and posted requests fail with `code` and `text`.
void fail_peer(Context *ctx, int peer, int code, const std::string &text);
// fail_peer with the message the failing call left by ctx->error() (or `fallback` where the
// caller gave no error buffer), logged: for a post to a queue pair that failed, after which
// the peer's message order has a gap or its credits are wrong, so nothing more can pass.
void fail_peer_after(Context *ctx, int peer, int code, const char *fallback);
// Completes a request with an error (it is freed by test()).
void fail_request(Context *ctx, Request *req, int code, const std::string &text);

}  // namespace braid::verbs
