#include "options.hpp"

#include <charconv>
#include <cstdlib>

namespace braid::verbs {
namespace {

bool parse_size(const char *name, const std::string &text, uint64_t max, uint64_t *out,
                std::string *error) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    *error =
        std::string(name) + "='" + text + "': expected a number from 0 to " + std::to_string(max);
    return false;
  }
  *out = value;
  return true;
}

bool parse_switch(EnvLookup env, const char *name, bool *out, std::string *error) {
  const char *text = env(name);
  if (text == nullptr || *text == '\0') return true;
  std::string v = text;
  if (v != "on" && v != "off") {
    *error = std::string(name) + "='" + v + "': expected on or off";
    return false;
  }
  *out = v == "on";
  return true;
}

}  // namespace

const char *process_env(const char *name) {
  return std::getenv(name);
}

bool parse_device(const std::string &text, std::string *device, int *port, std::string *error) {
  size_t colon = text.rfind(':');
  *device = text.substr(0, colon);
  *port = 0;
  if (device->empty() || device->size() > 63) {
    *error = "BRAID_VERBS_DEVICE='" + text + "': expected <device>[:<port>], e.g. rxe0:1";
    return false;
  }
  if (colon != std::string::npos) {
    uint64_t p = 0;
    if (!parse_size("BRAID_VERBS_DEVICE port", text.substr(colon + 1), 255, &p, error) || p == 0) {
      *error = "BRAID_VERBS_DEVICE='" + text + "': port must be a number from 1 to 255";
      return false;
    }
    *port = static_cast<int>(p);
  }
  return true;
}

bool parse_options(EnvLookup env, Options *out, std::string *error) {
  *out = Options{};
  if (const char *dev = env("BRAID_VERBS_DEVICE"); dev != nullptr && *dev != '\0') {
    if (!parse_device(dev, &out->device, &out->port, error)) return false;
  }
  const char *spec = env("BRAID_VERBS_RECV_QUEUES");
  std::string text = spec != nullptr && *spec != '\0' ? spec : std::string(kDefaultRecvQueues);
  if (!parse_recv_queues(text, &out->queues, error)) return false;
  if (const char *eager = env("BRAID_VERBS_EAGER_LIMIT"); eager != nullptr && *eager != '\0') {
    uint64_t v = 0;
    if (!parse_size("BRAID_VERBS_EAGER_LIMIT", eager, kMaxQueueBytes, &v, error)) return false;
    out->eager_limit = v;
  }
  if (const char *rnr = env("BRAID_VERBS_RNR_RETRY"); rnr != nullptr && *rnr != '\0') {
    uint64_t v = 0;
    if (!parse_size("BRAID_VERBS_RNR_RETRY", rnr, 7, &v, error)) return false;
    out->rnr_retry = static_cast<int>(v);
  }
  return parse_switch(env, "BRAID_VERBS_RCACHE", &out->rcache, error) &&
         parse_switch(env, "BRAID_VERBS_DIRECT", &out->direct, error) &&
         parse_switch(env, "BRAID_VERBS_HEADERLESS", &out->headerless, error);
}

}  // namespace braid::verbs
