// Internal error type: every failure inside braid is a Failure carrying the public result code
// and a message that names the rank, peer, operation and sizes. The C API boundary turns it
// into a braid_result_t plus braid_last_error().
#pragma once

#include <braid/braid.h>

#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace braid::detail {

class Failure : public std::exception {
 public:
  Failure(braid_result_t code, std::string message) : code_(code), message_(std::move(message)) {}
  braid_result_t code() const noexcept { return code_; }
  const char *what() const noexcept override { return message_.c_str(); }
  const std::string &message() const noexcept { return message_; }

 private:
  braid_result_t code_;
  std::string message_;
};

// A mismatch this rank saw in full (both sides' arguments, e.g. in shared-memory call records):
// the message already explains it, and it is told to the other ranks as it is.
class Disagreement : public Failure {
 public:
  explicit Disagreement(std::string message) : Failure(BRAID_ERR_MISMATCH, std::move(message)) {}
};

// Concatenates anything streamable: cat("rank ", r, " sent ", n, " bytes").
template <typename... Args>
std::string cat(Args &&...args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

template <typename... Args>
[[noreturn]] void fail(braid_result_t code, Args &&...args) {
  throw Failure(code, cat(std::forward<Args>(args)...));
}

}  // namespace braid::detail
