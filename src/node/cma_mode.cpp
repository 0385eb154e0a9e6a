#include "node/cma_mode.hpp"

namespace braid::detail {

std::optional<CmaMode> cma_mode_from(const std::optional<std::string> &value) {
  if (!value || value->empty() || *value == "auto") return CmaMode::automatic;
  if (*value == "on") return CmaMode::always;
  if (*value == "off") return CmaMode::off;
  return std::nullopt;
}

}  // namespace braid::detail
