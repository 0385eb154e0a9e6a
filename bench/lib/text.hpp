// String building by appending: cat("--iters '", value, "': ", why). (Avoids chains of
// "literal" + std::string temporaries, which also trip a g++ 12 -Wrestrict false positive.)
#pragma once

#include <concepts>
#include <string>
#include <string_view>

namespace braid_bench {

namespace detail {
inline void append(std::string &out, std::string_view s) {
  out.append(s);
}
inline void append(std::string &out, const char *s) {
  out.append(s);
}
inline void append(std::string &out, const std::string &s) {
  out.append(s);
}
inline void append(std::string &out, char c) {
  out.push_back(c);
}
template <std::integral T>
requires(!std::same_as<T, char> && !std::same_as<T, bool>) void append(std::string &out, T v) {
  out.append(std::to_string(v));
}
}  // namespace detail

template <typename... Args>
std::string cat(const Args &...args) {
  std::string out;
  (detail::append(out, args), ...);
  return out;
}

}  // namespace braid_bench
