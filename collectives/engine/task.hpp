// Task: the coroutine type every collective algorithm returns. An algorithm reads like the
// textbook (send, receive, reduce, next round) while the engine runs it as a restartable state
// machine: each `co_await` on point-to-point operations suspends it until they complete, so the
// same code serves blocking and non-blocking calls and several collectives can be in flight.
// A Task can also `co_await` another Task (a phase such as a reduce-scatter) as a sub-step.
#pragma once

#include <coroutine>
#include <exception>
#include <utility>

#include "engine/frame_pool.hpp"

namespace braid::coll {

class [[nodiscard]] Task {
 public:
  struct promise_type {
    std::exception_ptr error;
    std::coroutine_handle<> continuation;  // the Task awaiting this one, if any

    // Frames come from the thread's recycled ones (frame_pool.hpp): a call runs several.
    static void *operator new(std::size_t bytes) { return frame_pool::allocate(bytes); }
    static void operator delete(void *frame, std::size_t bytes) noexcept {
      frame_pool::release(frame, bytes);
    }

    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    // Lazy start: the engine (or the awaiting parent) decides when the first step runs.
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        auto next = h.promise().continuation;
        return next ? next : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { error = std::current_exception(); }
  };

  Task() = default;
  explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
  Task(Task &&other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task &operator=(Task &&other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  ~Task() {
    if (handle_) handle_.destroy();
  }

  std::coroutine_handle<promise_type> handle() const { return handle_; }
  bool done() const { return !handle_ || handle_.done(); }
  // Rethrows the failure of a finished Task.
  void rethrow_if_failed() const {
    if (handle_ && handle_.promise().error) std::rethrow_exception(handle_.promise().error);
  }

  // Awaiting a Task runs it as a sub-step of the awaiting one (symmetric transfer).
  bool await_ready() const noexcept { return done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) noexcept {
    handle_.promise().continuation = parent;
    return handle_;
  }
  void await_resume() const { rethrow_if_failed(); }

 private:
  std::coroutine_handle<promise_type> handle_;
};

}  // namespace braid::coll
