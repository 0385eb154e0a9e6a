#include "engine/collective.hpp"

#include <new>

#include "error.hpp"
#include "kernels/reduce_kernels.hpp"

namespace braid::coll {

std::string CallLabel::str() const {
  return detail::cat("rank ", rank, ": ", kind_name(kind), " #", seq, " (", algorithm, ", ", size,
                     " ranks, ", bytes, " bytes)");
}

Collective::Collective(detail::Transport &transport, ScratchPool &scratch, int rank, int size,
                       uint64_t tag_base, double timeout_s, CallLabel label, AlgorithmFn algorithm,
                       CollArgs args, NodeChannel *node, const int *members)
    : label_(label), ctx_(transport, scratch, rank, size, tag_base, timeout_s, members) {
  ctx_.set_node(node);
  ctx_.set_seq(label.seq);
  if (needs_average(args)) {
    average_buf_ = args.recvbuf;
    average_count_ = args.count;
    average_dtype_ = args.dtype;
  }
  task_ = algorithm(ctx_, args);
}

bool Collective::advance(bool *progressed) {
  if (finished_) return true;
  try {
    if (!started_) {
      started_ = true;
      *progressed = true;
      task_.handle().resume();
    } else {
      if (ctx_.poll()) *progressed = true;
      // Resume as long as the algorithm finds what it waits for already complete.
      while (auto next = ctx_.take_ready()) {
        *progressed = true;
        next.resume();
        if (task_.done()) break;
        ctx_.poll();
      }
    }
    if (task_.done()) {
      task_.rethrow_if_failed();
      if (average_buf_ != nullptr)
        finish_average(average_buf_, average_count_, average_dtype_, ctx_.size());
      finish(BRAID_SUCCESS, {});
      return true;
    }
    ctx_.check_deadline();
  } catch (const detail::Disagreement &d) {
    disagreement_ = true;
    finish(d.code(), label_.str() + ": " + d.message());
  } catch (const detail::Failure &f) {
    finish(f.code(), label_.str() + ": " + f.message());
  } catch (const std::bad_alloc &) {
    finish(BRAID_ERR_NO_MEMORY, label_.str() + ": out of memory");
  } catch (const std::exception &e) {
    finish(BRAID_ERR_INTERNAL, label_.str() + ": " + e.what());
  }
  return finished_;
}

void Collective::abort(braid_result_t result, const std::string &why, int failed_peer) {
  if (!finished_) finish(result, label_.str() + ": " + why, failed_peer);
}

void Collective::finish(braid_result_t result, std::string message, int failed_peer) {
  // Outstanding requests are cancelled before the algorithm's frame (and its buffers) goes.
  // A send the transport may still carry out (abandoned: a rendezvous a slow peer pulls later)
  // reads its buffer: the frame's scratch blocks are held back from reuse, or that peer would
  // get the bytes of a later call (ScratchPool::hold_returns).
  const bool abandoned_sends = ctx_.cancel_all(failed_peer);
  ctx_.scratch_pool().hold_returns(abandoned_sends);
  task_ = Task();
  ctx_.scratch_pool().hold_returns(false);
  finished_ = true;
  result_ = result;
  message_ = std::move(message);
}

}  // namespace braid::coll
