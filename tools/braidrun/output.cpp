#include "output.hpp"

#include <unistd.h>

#include <cerrno>

namespace braidrun {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

namespace {
// Built by appending: `"[" + std::to_string(rank) + "] "` trips GCC 12's false -Wrestrict
// warning at -O3 (GCC PR 105329).
std::string rank_prefix(int rank) {
  std::string prefix = "[";
  prefix += std::to_string(rank);
  prefix += "] ";
  return prefix;
}
}  // namespace

LineForwarder::LineForwarder(int rank, int destination_fd)
    : prefix_(rank_prefix(rank)), destination_(destination_fd) {}

void LineForwarder::append_line(std::string &batch, std::string_view line) const {
  batch += prefix_;
  batch += line;
  batch += '\n';
}

void LineForwarder::emit(const std::string &batch) {
  if (broken_ || batch.empty()) return;
  if (!write_all(destination_, batch)) broken_ = true;
}

void LineForwarder::consume(std::string_view data) {
  // All complete lines of this chunk go out in one write() call.
  std::string batch;
  while (!data.empty()) {
    const std::size_t newline = data.find('\n');
    if (newline == std::string_view::npos) {
      pending_.append(data);
      break;
    }
    if (pending_.empty()) {
      append_line(batch, data.substr(0, newline));
    } else {
      pending_.append(data.substr(0, newline));
      append_line(batch, pending_);
      pending_.clear();
    }
    data.remove_prefix(newline + 1);
  }
  // Longer than a line may be, not as long: a line of exactly kMaxLine bytes whose newline is
  // in the next read is one line, not a piece and an empty line.
  while (pending_.size() > kMaxLine) {
    append_line(batch, std::string_view(pending_).substr(0, kMaxLine));
    pending_.erase(0, kMaxLine);
  }
  emit(batch);
}

void LineForwarder::finish() {
  if (pending_.empty()) return;
  std::string batch;
  append_line(batch, pending_);
  pending_.clear();
  emit(batch);
}

}  // namespace braidrun
