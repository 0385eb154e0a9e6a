#include "bootstrap/frame_io.hpp"

#include <sys/socket.h>

#include <algorithm>

#include "error.hpp"

namespace braid::detail::bs {

Failure link_failure(const IoResult &io, const LinkContext &ctx) {
  if (io.state == IoState::timeout)
    return Failure(ctx.timeout_code, cat(ctx.prefix, "timed out after ", ctx.timeout_s,
                                         " s waiting for rank ", ctx.peer));
  return Failure(ctx.broken_code,
                 cat(ctx.prefix, "lost connection to rank ", ctx.peer, ": ", describe(io)));
}

void fail_link(const IoResult &io, const LinkContext &ctx) {
  throw link_failure(io, ctx);
}

void fail_protocol(const std::string &why, const LinkContext &ctx) {
  fail(ctx.broken_code, ctx.prefix, "rank ", ctx.peer, " sent an invalid frame: ", why);
}

IoResult send_frame(int fd, const FrameHeader &header, const void *payload,
                    const Deadline &deadline, bool stop_on_input) {
  HeaderBytes head = encode_header(header);
  IoResult io = send_all(fd, head.data(), head.size(), deadline, stop_on_input);
  if (io.state != IoState::ok || header.length == 0) return io;
  return send_all(fd, payload, header.length, deadline, stop_on_input);
}

FrameHeader await_frame(int fd, uint32_t seq, const FrameType *expected, const Deadline &deadline,
                        const LinkContext &ctx) {
  HeaderBytes head{};
  IoResult io = recv_all(fd, head.data(), head.size(), deadline);
  if (io.state != IoState::ok) fail_link(io, ctx);
  FrameHeader header = decode_header(head);
  std::string why = expected ? check_header(header, {*expected, FrameType::error}, seq)
                             : check_header(header, {FrameType::error}, seq);
  if (!why.empty()) fail_protocol(why, ctx);
  if (header.type != static_cast<uint32_t>(FrameType::error)) return header;

  if (header.length > kMaxErrorPayload)
    fail_protocol(cat("error report of ", header.length, " bytes"), ctx);
  std::vector<uint8_t> payload(header.length);
  io = recv_all(fd, payload.data(), payload.size(), deadline);
  if (io.state != IoState::ok) fail_link(io, ctx);
  auto report = decode_error(payload);
  if (!report) fail_protocol("malformed error report", ctx);
  fail(report->code, ctx.error_prefix, report->message);
}

void report_error(const std::vector<int> &fds, uint32_t seq, braid_result_t code,
                  const std::string &message, bool close_after) {
  std::vector<uint8_t> payload = encode_error(code, message);
  FrameHeader header{static_cast<uint32_t>(FrameType::error), seq, payload.size()};
  Deadline deadline = Deadline::after(1.0);
  for (int fd : fds) {
    send_frame(fd, header, payload.data(), deadline);
    if (close_after) shutdown(fd, SHUT_WR);
  }
}

}  // namespace braid::detail::bs
