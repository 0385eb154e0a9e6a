// Two branches of one algorithm in flight at once: `co_await both(ctx, a, b)` runs Tasks a and
// b concurrently on the collective's one CollContext and resumes the awaiting Task when both
// have finished. A pipeline needs this: e.g. a node leader exchanges segment i with the other
// leaders over the transport while its node reduces segment i + 1 in shared memory.
//
// When both branches can run, the first one does: give it the latency-critical branch (the one
// whose peers wait for it). Rules: branches do not nest, and only one branch may send or receive
// (they share the ops table, and wait_all() consumes it): the other waits on flags only. Branches
// wait for each other through counters of this process (FlagWait with peer -1). The first failure
// ends both: the parent is resumed at once and rethrows it; the other branch is dropped where it
// stands (its frame is destroyed with the parent's, its messages cancelled when the collective
// ends).
#pragma once

#include <coroutine>
#include <exception>

#include "engine/coll_context.hpp"
#include "engine/task.hpp"

namespace braid::coll {

class Both {
 public:
  Both(CollContext &ctx, Task a, Task b)
      : ctx_(&ctx), runs_{run(join_, std::move(a)), run(join_, std::move(b))} {}
  Both(const Both &) = delete;
  Both &operator=(const Both &) = delete;

  bool await_ready() const noexcept { return false; }
  // Starts a, then b (unless a failed already); the parent stays suspended unless both are done
  // (or one failed) by then.
  bool await_suspend(std::coroutine_handle<> parent) {
    join_.parent = parent;
    ctx_->begin_branches();
    for (int i = 0; i < CollContext::kBranches && !join_.error; ++i) {
      ctx_->enter_branch(i);
      runs_[i].handle.resume();
    }
    join_.starting = false;
    return join_.running > 0 && !join_.error;
  }
  void await_resume() {
    ctx_->end_branches();
    if (join_.error) std::rethrow_exception(join_.error);
  }

 private:
  struct Join {
    std::coroutine_handle<> parent;
    int running = CollContext::kBranches;
    bool starting = true;  // inside await_suspend: the parent must not be resumed from there
    std::exception_ptr error;
  };

  // A branch runner: awaits its Task, records a failure, and when it is the last to finish (or
  // the first to fail) transfers control to the parent.
  struct Run {
    struct promise_type {
      Join *join;
      promise_type(Join &j, Task &) : join(&j) {}
      static void *operator new(std::size_t bytes) { return frame_pool::allocate(bytes); }
      static void operator delete(void *frame, std::size_t bytes) noexcept {
        frame_pool::release(frame, bytes);
      }
      Run get_return_object() {
        return Run{std::coroutine_handle<promise_type>::from_promise(*this)};
      }
      std::suspend_always initial_suspend() noexcept { return {}; }
      struct FinalAwaiter {
        bool await_ready() noexcept { return false; }
        std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
          Join &j = *h.promise().join;
          --j.running;
          if (j.starting || (j.running > 0 && !j.error)) return std::noop_coroutine();
          // Resume the parent only once: after a failure the other branch never runs again.
          auto parent = std::exchange(j.parent, {});
          return parent ? parent : std::noop_coroutine();
        }
        void await_resume() noexcept {}
      };
      FinalAwaiter final_suspend() noexcept { return {}; }
      void return_void() {}
      void unhandled_exception() { std::terminate(); }  // run() catches everything
    };
    std::coroutine_handle<promise_type> handle;
    explicit Run(std::coroutine_handle<promise_type> h) : handle(h) {}
    Run(Run &&o) noexcept : handle(std::exchange(o.handle, {})) {}
    Run &operator=(Run &&) = delete;
    ~Run() {
      if (handle) handle.destroy();
    }
  };

  static Run run(Join &join, Task task) {
    try {
      co_await task;
    } catch (...) {
      if (!join.error) join.error = std::current_exception();
    }
  }

  CollContext *ctx_;
  Join join_;
  Run runs_[CollContext::kBranches];
};

// co_await both(ctx, a, b): see Both.
inline Both both(CollContext &ctx, Task a, Task b) {
  return Both(ctx, std::move(a), std::move(b));
}

}  // namespace braid::coll
