// Frames over a connected socket, and how I/O failures on a link become Failures.
#pragma once

#include <braid/braid.h>

#include <string>
#include <utility>
#include <vector>

#include "bootstrap/socket.hpp"
#include "bootstrap/wire.hpp"
#include "error.hpp"

namespace braid::detail::bs {

// What a failure on one link means to the caller: which codes to raise and how to word them.
struct LinkContext {
  std::string prefix;  // starts every message: "bootstrap allgather: ", "rank 3: "
  int peer = 0;        // the rank at the other end
  double timeout_s = 0;
  braid_result_t broken_code = BRAID_ERR_PEER_FAILED;  // EOF, socket error, invalid frame
  braid_result_t timeout_code = BRAID_ERR_TIMEOUT;
  std::string error_prefix;  // prepended to an error reported by rank 0 in an error frame

  // A link used by a collective: failures are BRAID_ERR_PEER_FAILED / BRAID_ERR_TIMEOUT and
  // rank 0's reports are passed on as it worded them.
  static LinkContext collective(std::string op, int peer, double timeout_s) {
    return {std::move(op), peer, timeout_s, BRAID_ERR_PEER_FAILED, BRAID_ERR_TIMEOUT, ""};
  }
};

// The Failure an I/O failure on the link means (returned, for callers that must report it to
// others before throwing it).
Failure link_failure(const IoResult &io, const LinkContext &ctx);
[[noreturn]] void fail_link(const IoResult &io, const LinkContext &ctx);
[[noreturn]] void fail_protocol(const std::string &why, const LinkContext &ctx);

IoResult send_frame(int fd, const FrameHeader &header, const void *payload,
                    const Deadline &deadline, bool stop_on_input = false);

// Reads the next frame header from rank 0. It must be `expected` (if given) with sequence seq,
// or an error frame, which is read and thrown as the Failure rank 0 reported.
FrameHeader await_frame(int fd, uint32_t seq, const FrameType *expected, const Deadline &deadline,
                        const LinkContext &ctx);

// Rank 0 telling ranks that a collective failed: best effort, bounded by one short deadline
// in total, because the job is failing anyway and one stuck peer must not delay the report.
// With close_after the connections are also shut down for writing, so a rank that comes
// later gets the report and then EOF rather than waiting.
void report_error(const std::vector<int> &fds, uint32_t seq, braid_result_t code,
                  const std::string &message, bool close_after);

}  // namespace braid::detail::bs
