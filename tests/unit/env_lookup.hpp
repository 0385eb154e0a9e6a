// An EnvLookup backed by a map, so tests give the parsers an environment without touching the
// process's own.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "config/env_config.hpp"

namespace braid::detail {

using Vars = std::map<std::string, std::string>;

inline EnvLookup lookup(const Vars &vars) {
  return [vars](const char *name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace braid::detail
