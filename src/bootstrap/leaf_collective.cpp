// The side of a bootstrap collective that every rank but 0 runs: send our block, then wait
// for rank 0's answer, which is either the result or a report of what went wrong and where.
#include "bootstrap/collective.hpp"
#include "bootstrap/frame_io.hpp"

namespace braid::detail::bs {

void leaf_collective(Star &star, const CollectiveCall &call) {
  const int fd = star.to_root.get();
  const LinkContext ctx = LinkContext::collective(call.op, 0, call.timeout_s);
  const Deadline deadline = Deadline::after(follower_wait_s(call.timeout_s));
  const FrameHeader mine{static_cast<uint32_t>(call.kind), call.seq, call.bytes};
  // Rank 0 only speaks before our block is fully sent to report a failure; stop sending
  // then and read the report (await_frame throws it), rather than block on a full socket.
  IoResult io = send_frame(fd, mine, call.in, deadline, true);
  if (io.state == IoState::input) await_frame(fd, call.seq, nullptr, deadline, ctx);
  if (io.state != IoState::ok) fail_link(io, ctx);

  const FrameType expected = FrameType::result;
  const FrameHeader result = await_frame(fd, call.seq, &expected, deadline, ctx);
  const uint64_t total = static_cast<uint64_t>(call.size) * call.bytes;
  if (result.length != total)
    fail_protocol(cat("result of ", result.length, " bytes, expected ", total), ctx);
  io = recv_all(fd, call.out, total, deadline);
  if (io.state != IoState::ok) fail_link(io, ctx);
}

}  // namespace braid::detail::bs
