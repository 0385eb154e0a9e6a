// The verbs plugin's environment: BRAID_VERBS_DEVICE, BRAID_VERBS_RECV_QUEUES,
// BRAID_VERBS_EAGER_LIMIT, BRAID_VERBS_RNR_RETRY, BRAID_VERBS_RCACHE, BRAID_VERBS_DIRECT,
// BRAID_VERBS_HEADERLESS.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recv_spec.hpp"

namespace braid::verbs {

struct Options {
  std::string device;  // BRAID_VERBS_DEVICE=<dev>[:<port>]; empty: the first active port
  int port = 0;        // 0: the device's first active port
  std::vector<QueueSpec> queues;
  size_t eager_limit = 0;  // 0: the largest class's payload
  // RNR retries of per-peer QPs. Credits make an RNR impossible there, so tests run with 0 to
  // prove it; shared-queue QPs always retry (7 = forever) because an SRQ can run dry.
  int rnr_retry = 7;
  uint32_t send_slots = 64;  // registered bounce buffers per class
  uint32_t sq_depth = 256;   // send work requests per QP
  bool rcache = true;        // BRAID_VERBS_RCACHE=on|off: cache registrations of user buffers
  // BRAID_VERBS_DIRECT=on|off: advertise posted receives so that eager messages land in them
  // without a copy (direct.hpp); needs the registration cache or a caller's registration. Off by
  // default: measured, the adverts of the usual patterns (ping-pong, windows posted after the
  // previous one's acknowledgement, collectives posting each step's receive with its send)
  // arrive after their message left, and cancelling an advertised receive waits for the peer.
  bool direct = false;
  // BRAID_VERBS_HEADERLESS=on|off: eager messages whose tag is near the previous one to the same
  // peer travel without the 24-byte header (wire.hpp). Off only to measure what it saves.
  bool headerless = true;
};

// getenv-style lookup, replaceable in tests.
using EnvLookup = const char *(*)(const char *);
const char *process_env(const char *name);  // std::getenv

bool parse_options(EnvLookup env, Options *out, std::string *error);

// "<dev>[:<port>]" -> device, port (0 when absent).
bool parse_device(const std::string &text, std::string *device, int *port, std::string *error);

}  // namespace braid::verbs
