#include "requests.hpp"

namespace braid::verbs {

Request *RequestTable::allocate(ReqKind kind, int peer, uint64_t tag, void *buf, size_t bytes) {
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::make_unique<Request>());
    live_.push_back(false);
  }
  Request *req = slots_[index].get();
  const uint32_t generation = req->generation + 1;
  // Field by field rather than `*req = Request{}`: every message allocates one, and a whole
  // temporary with its string, moved in and destroyed, was a quarter of posting a small send.
  req->kind = kind;
  req->state = ReqState::Queued;
  req->index = index;
  req->generation = generation;
  req->peer = peer;
  req->tag = tag;
  req->buf = static_cast<uint8_t *>(buf);
  req->bytes = bytes;
  req->received = 0;
  req->user_mr = nullptr;
  req->transient_mr = nullptr;
  req->cached = nullptr;
  req->status = 0;
  req->error.clear();
  req->rts = RtsBody{};
  req->reads_posted = 0;
  req->reads_done = 0;
  req->reads_total = 0;
  req->read_status = 0;
  req->free_when_done = false;
  req->advertised = false;
  req->cancelling = false;
  live_[index] = true;
  return req;
}

void RequestTable::release(Request *req) {
  if (!live_[req->index]) return;
  live_[req->index] = false;
  req->error.clear();
  free_.push_back(req->index);
}

Request *RequestTable::find(uint64_t id) {
  uint32_t index = static_cast<uint32_t>(id);
  uint32_t generation = static_cast<uint32_t>(id >> 32);
  if (index >= slots_.size() || !live_[index]) return nullptr;
  Request *req = slots_[index].get();
  return req->generation == generation ? req : nullptr;
}

}  // namespace braid::verbs
