#include "config/env_config.hpp"

#include "error.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace braid::detail {

EnvLookup process_env() {
  return [](const char *name) -> std::optional<std::string> {
    const char *value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

long long parse_integer(std::string_view text, const char *what, long long min, long long max) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    fail(BRAID_ERR_INVALID_ARGUMENT, what, "='", text, "' is not an integer");
  if (value < min || value > max)
    fail(BRAID_ERR_INVALID_ARGUMENT, what, "=", value, " is out of range [", min, ", ", max, "]");
  return value;
}

bool switch_on(const EnvLookup &env, const char *name) {
  const std::optional<std::string> v = env(name);
  if (!v || v->empty() || *v == "on" || *v == "auto") return true;
  if (*v == "off") return false;
  fail(BRAID_ERR_INVALID_ARGUMENT, name, "='", *v, "' is not on, off or auto");
}

double parse_seconds(std::string_view text, const char *what) {
  // from_chars, unlike strtod, takes no leading blanks, signs or hex: "1.5", "30", "2e1".
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value <= 0)
    fail(BRAID_ERR_INVALID_ARGUMENT, what, "='", text, "' is not a positive number of seconds");
  return value;
}

void parse_host_port(std::string_view text, const char *what, std::string *host, uint16_t *port) {
  std::string_view host_part;
  std::string_view port_part;
  if (!text.empty() && text.front() == '[') {  // [IPv6]:port
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      fail(BRAID_ERR_INVALID_ARGUMENT, what, "='", text, "' is not [ipv6]:port");
    host_part = text.substr(1, close - 1);
    port_part = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon)
      fail(BRAID_ERR_INVALID_ARGUMENT, what, "='", text, "' is not host:port");
    host_part = text.substr(0, colon);
    port_part = text.substr(colon + 1);
  }
  if (host_part.empty()) fail(BRAID_ERR_INVALID_ARGUMENT, what, "='", text, "' has no host");
  long long value = 0;
  try {
    value = parse_integer(port_part, "port", 1, 65535);
  } catch (const Failure &f) {
    fail(BRAID_ERR_INVALID_ARGUMENT, what, "='", text, "': ", f.message());
  }
  *port = static_cast<uint16_t>(value);
  *host = std::string(host_part);
}

namespace {

std::vector<Endpoint> parse_endpoint_list(std::string_view text, const char *what) {
  std::vector<Endpoint> out;
  while (true) {
    const size_t comma = text.find(',');
    Endpoint e;
    parse_host_port(text.substr(0, comma), what, &e.host, &e.port);
    out.push_back(std::move(e));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

EnvConfig parse_env_config(const EnvLookup &env) {
  EnvConfig cfg;
  auto rank = env("BRAID_RANK");
  auto size = env("BRAID_SIZE");
  auto boot = env("BRAID_BOOTSTRAP");
  auto rendezvous = env("BRAID_RENDEZVOUS");
  if (auto t = env("BRAID_TIMEOUT")) cfg.timeout_s = parse_seconds(*t, "BRAID_TIMEOUT");
  if (auto t = env("BRAID_TRANSPORT"); t && !t->empty()) cfg.transport = *t;
  if (auto k = env("BRAID_JOB_KEY")) cfg.job_key = *k;
  if (!rank && !size && !boot && !rendezvous) return cfg;  // nothing points to a larger job

  // A partial environment is a launch mistake; running as a 1-rank world would silently give
  // wrong answers, so it is an error that says which variable is missing.
  if (!rank || !size) {
    std::string missing = !rank && !size ? "BRAID_RANK and BRAID_SIZE are"
                          : !rank        ? "BRAID_RANK is"
                                         : "BRAID_SIZE is";
    std::vector<std::string> present;
    if (rank) present.push_back("BRAID_RANK");
    if (size) present.push_back("BRAID_SIZE");
    if (boot) present.push_back("BRAID_BOOTSTRAP");
    if (rendezvous) present.push_back("BRAID_RENDEZVOUS");
    std::string listed;
    for (size_t i = 0; i < present.size(); ++i)
      listed += (i == 0 ? "" : i + 1 == present.size() ? " and " : ", ") + present[i];
    fail(BRAID_ERR_BOOTSTRAP, "incomplete job environment: ", missing, " unset while ", listed,
         present.size() > 1 ? " are" : " is", " set");
  }
  cfg.size = static_cast<int>(parse_integer(*size, "BRAID_SIZE", 1, 1 << 20));
  cfg.rank = static_cast<int>(parse_integer(*rank, "BRAID_RANK", 0, cfg.size - 1));
  cfg.launched = true;
  if (boot && rendezvous)
    fail(BRAID_ERR_BOOTSTRAP,
         "BRAID_BOOTSTRAP and BRAID_RENDEZVOUS are both set; a job uses one or the other");
  if (cfg.size > 1 && !boot && !rendezvous)
    fail(BRAID_ERR_BOOTSTRAP, "BRAID_SIZE=", cfg.size, " but BRAID_BOOTSTRAP is unset");
  // Checked even for one rank: a malformed value is a launch mistake worth reporting.
  if (boot) parse_host_port(*boot, "BRAID_BOOTSTRAP", &cfg.bootstrap_host, &cfg.bootstrap_port);
  if (rendezvous) cfg.rendezvous = parse_endpoint_list(*rendezvous, "BRAID_RENDEZVOUS");
  auto local_size = env("BRAID_LOCAL_SIZE");
  auto local_rank = env("BRAID_LOCAL_RANK");
  cfg.local_size = cfg.size;
  cfg.local_rank = cfg.rank;
  if (local_size)
    cfg.local_size = static_cast<int>(parse_integer(*local_size, "BRAID_LOCAL_SIZE", 1, cfg.size));
  if (local_rank)
    cfg.local_rank =
        static_cast<int>(parse_integer(*local_rank, "BRAID_LOCAL_RANK", 0, cfg.local_size - 1));
  else if (local_size)  // the global rank is no stand-in: it may exceed the local size
    fail(BRAID_ERR_BOOTSTRAP,
         "incomplete job environment: BRAID_LOCAL_SIZE is set without BRAID_LOCAL_RANK");
  return cfg;
}

}  // namespace braid::detail
