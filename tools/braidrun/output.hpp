// Output forwarding for --tag-output: turns one rank's byte stream into "[rank] line" writes on
// braidrun's stdout or stderr. Each write holds whole lines, so lines of different ranks never
// mix even though all ranks share one destination.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace braidrun {

// Writes all of data, retrying after EINTR and short writes. False on error (e.g. EPIPE when
// braidrun's reader went away; SIGPIPE is ignored so that is not fatal).
bool write_all(int fd, std::string_view data);

class LineForwarder {
 public:
  // A line that grows past this without a newline is forwarded in pieces, so a rank that
  // never writes a newline cannot make braidrun buffer without bound.
  static constexpr std::size_t kMaxLine = 64 * 1024;

  LineForwarder(int rank, int destination_fd);

  // Forwards every line completed by data and keeps the rest for later.
  void consume(std::string_view data);
  // End of stream: forwards a last line that had no newline, terminated with one.
  void finish();
  // The destination failed (e.g. braidrun's reader went away); nothing more will be written.
  bool broken() const { return broken_; }

 private:
  void append_line(std::string &batch, std::string_view line) const;
  void emit(const std::string &batch);

  std::string prefix_;
  std::string pending_;  // start of a line still waiting for its newline
  int destination_;
  bool broken_ = false;
};

}  // namespace braidrun
