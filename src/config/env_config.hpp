// The environment contract (BRAID_RANK, BRAID_SIZE, BRAID_BOOTSTRAP, ...) parsed and validated in
// one place, so every malformed value gets an error naming the variable and the value.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braid::detail {

// Reads one variable; tests pass a map-backed function instead of the process environment.
using EnvLookup = std::function<std::optional<std::string>(const char *name)>;
EnvLookup process_env();

struct Endpoint {
  std::string host;  // IPv6 addresses without brackets
  uint16_t port = 0;
};

struct EnvConfig {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string bootstrap_host;  // empty for a 1-rank world
  uint16_t bootstrap_port = 0;
  // BRAID_RENDEZVOUS=host:port[,host:port...]: instead of BRAID_BOOTSTRAP, the addresses of
  // braidrun's rendezvous service (jobs across hosts), where rank 0 registers the address it
  // listens on and the other ranks look it up. Tried in order.
  std::vector<Endpoint> rendezvous;
  std::string job_key;
  std::string transport = "auto";  // auto | ucx | verbs | <plugin name>
  double timeout_s = 300.0;
  bool launched = false;  // true when BRAID_RANK/SIZE described a job
};

// The braid contract only (other job sources are found by job/job_source.hpp). Throws
// Failure(BRAID_ERR_BOOTSTRAP or BRAID_ERR_INVALID_ARGUMENT) naming the variable.
EnvConfig parse_env_config(const EnvLookup &env);

// Small parsers shared with the tools; each throws Failure naming `what` and the text.
long long parse_integer(std::string_view text, const char *what, long long min, long long max);
double parse_seconds(std::string_view text, const char *what);
void parse_host_port(std::string_view text, const char *what, std::string *host, uint16_t *port);
// A switch that is on unless set to "off": unset, empty, "on" and "auto" are on; anything else
// throws Failure(BRAID_ERR_INVALID_ARGUMENT) naming the variable and its value.
bool switch_on(const EnvLookup &env, const char *name);

}  // namespace braid::detail
