// Requests returned by isend/irecv live in a table indexed by a small integer, so a FIN from a
// peer (which names the sender's request) and an RDMA READ completion (whose wr_id names the
// receive) find theirs in O(1). A generation count rejects stale or forged ids.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wire.hpp"

namespace braid::verbs {

struct CachedReg;

enum class ReqKind : uint8_t { Send, Recv };
enum class ReqState : uint8_t {
  Queued,   // send waiting for credits, a bounce buffer or a send queue slot
  Posted,   // receive waiting for a message
  Reading,  // receive issuing / waiting for RDMA READs
  WaitFin,  // rendezvous send waiting for the receiver's FIN
  Done,
  Failed,
};

// A field added here is reset in RequestTable::allocate too.
struct Request {
  ReqKind kind = ReqKind::Send;
  ReqState state = ReqState::Queued;
  uint32_t index = 0;
  uint32_t generation = 0;
  int peer = -1;
  uint64_t tag = 0;
  uint8_t *buf = nullptr;
  size_t bytes = 0;
  size_t received = 0;
  ibv_mr *user_mr = nullptr;       // from reg_mr, covering buf (not owned)
  ibv_mr *transient_mr = nullptr;  // registered for this rendezvous only
  CachedReg *cached = nullptr;     // from the registration cache, held for this rendezvous
  int status = 0;
  std::string error;
  // Receive side of a rendezvous.
  RtsBody rts{};
  uint32_t reads_posted = 0;
  uint32_t reads_done = 0;
  uint32_t reads_total = 0;
  int read_status = 0;          // first failed READ
  bool free_when_done = false;  // cancelled while the device still used its buffer
  bool advertised = false;      // a posted receive its sender may write into (direct.hpp)
  bool cancelling = false;      // posted, kept as a placeholder while its adverts are taken back

  uint64_t id() const { return (uint64_t{generation} << 32) | index; }
};

class RequestTable {
 public:
  Request *allocate(ReqKind kind, int peer, uint64_t tag, void *buf, size_t bytes);
  void release(Request *req);
  Request *find(uint64_t id);  // nullptr when unknown or already released
  Request *at(uint32_t index) { return index < slots_.size() ? slots_[index].get() : nullptr; }
  size_t size() const { return slots_.size(); }

 private:
  std::vector<std::unique_ptr<Request>> slots_;
  std::vector<uint32_t> free_;
  std::vector<bool> live_;
};

}  // namespace braid::verbs
