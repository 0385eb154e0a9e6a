// The transport requests of one message's chunks still outstanding, in posting order. Nearly
// every message is one chunk (only those past the transport's max_message are cut): that one is
// kept inline, so that posting a message allocates nothing. Under the guest's emulation a send
// or receive paid a heap allocation and its release, about 130 instructions, for a vector of
// one.
#pragma once

#include <braid/transport.h>

#include <cstddef>
#include <vector>

namespace braid::coll {

class ChunkRequests {
 public:
  bool empty() const { return head_ == size_; }
  braid_transport_req_t front() const { return at(head_); }
  void push_back(braid_transport_req_t req) {
    if (size_ == 0)
      first_ = req;
    else
      more_.push_back(req);
    ++size_;
  }
  void pop_front() { ++head_; }
  void clear() {
    head_ = size_ = 0;
    more_.clear();
  }
  // Calls f(req) for every request still outstanding, front first.
  template <typename F>
  void for_each(F &&f) const {
    for (size_t i = head_; i < size_; ++i) f(at(i));
  }

 private:
  braid_transport_req_t at(size_t i) const { return i == 0 ? first_ : more_[i - 1]; }

  braid_transport_req_t first_ = nullptr;
  std::vector<braid_transport_req_t> more_;  // the chunks after the first
  size_t head_ = 0;                          // chunks completed (popped)
  size_t size_ = 0;                          // chunks posted
};

}  // namespace braid::coll
