#include "options.hpp"

#include "hosts.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace braidrun {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Strictly decimal digits: "+4", " 4" and "4x" are rejected rather than half-accepted.
std::optional<int> parse_rank_count(std::string_view text) {
  if (!all_digits(text)) return std::nullopt;
  // More digits than kMaxRanks could ever need would overflow from_chars; they are out of range.
  const auto first_significant = text.find_first_not_of('0');
  if (first_significant != std::string_view::npos && text.size() - first_significant > 9) {
    return std::nullopt;
  }
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  if (value < 1 || value > kMaxRanks) return std::nullopt;
  return value;
}

// Only "digits" or "digits.digits": the value is handed to every rank verbatim, so it must be a
// form any consumer's number parser agrees on (no exponents, inf, nan, hex or signs).
bool is_positive_seconds(std::string_view text) {
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  if (!all_digits(whole)) return false;
  if (dot != std::string_view::npos && !all_digits(text.substr(dot + 1))) return false;
  return text.find_first_of("123456789") != std::string_view::npos;
}

bool is_transport(std::string_view text) {
  return text == "auto" || text == "ucx" || text == "verbs";
}

std::string invalid_value(std::string_view option, std::string_view value,
                          std::string_view expected) {
  return "invalid value '" + std::string(value) + "' for " + std::string(option) + ": expected " +
         std::string(expected);
}

}  // namespace

CommandLine parse_command_line(std::span<const char *const> args) {
  CommandLine result;
  Options &options = result.options;
  auto usage_error = [&result](std::string message) {
    result.action = Action::usage_error;
    result.error = std::move(message);
    return result;
  };

  std::size_t i = 0;
  bool have_ranks = false;
  for (; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program; "-" alone is a file name too

    // Long options also accept --name=value, the GNU convention scripts tend to use.
    std::string_view name = arg;
    std::optional<std::string_view> attached;
    if (arg.starts_with("--")) {
      if (const auto eq = arg.find('='); eq != std::string_view::npos) {
        name = arg.substr(0, eq);
        attached = arg.substr(eq + 1);
      }
    }
    auto value = [&]() -> std::optional<std::string_view> {
      if (attached) return attached;
      if (i + 1 < args.size()) return std::string_view(args[++i]);
      return std::nullopt;
    };
    auto flag = [&](std::string_view flag_name) { return name == flag_name && !attached; };

    if (flag("-h") || flag("--help")) {
      result.action = Action::help;
      return result;
    }
    if (flag("--version")) {
      result.action = Action::version;
      return result;
    }
    if (flag("--tag-output")) {
      options.tag_output = true;
    } else if (flag("--report-bindings")) {
      options.report_bindings = true;
    } else if (name == "--bind-to") {
      const auto text = value();
      if (!text) return usage_error("option '--bind-to' requires a value");
      if (*text != "none" && *text != "core" && *text != "numa")
        return usage_error(invalid_value(name, *text, "none, core or numa"));
      options.bind_to = std::string(*text);
    } else if (name == "--map-by") {
      const auto text = value();
      if (!text) return usage_error("option '--map-by' requires a value");
      if (*text != "core" && *text != "numa")
        return usage_error(invalid_value(name, *text, "core or numa"));
      options.map_by = std::string(*text);
    } else if (name == "-n" || name == "-np") {
      const auto text = value();
      if (!text) return usage_error("option '" + std::string(name) + "' requires a value");
      const auto ranks = parse_rank_count(*text);
      if (!ranks) {
        return usage_error(
            invalid_value(name, *text, "an integer from 1 to " + std::to_string(kMaxRanks)));
      }
      options.ranks = *ranks;
      have_ranks = true;
    } else if (name == "--transport") {
      const auto text = value();
      if (!text) return usage_error("option '--transport' requires a value");
      if (!is_transport(*text))
        return usage_error(invalid_value(name, *text, "auto, ucx or verbs"));
      options.transport = std::string(*text);
    } else if (name == "--timeout") {
      const auto text = value();
      if (!text) return usage_error("option '--timeout' requires a value");
      if (!is_positive_seconds(*text)) {
        return usage_error(
            invalid_value(name, *text, "a positive number of seconds, such as 30 or 2.5"));
      }
      options.timeout = std::string(*text);
    } else if (name == "--host" || name == "-H") {
      const auto text = value();
      if (!text) return usage_error("option '" + std::string(name) + "' requires a value");
      std::string error;
      if (!parse_host_list(*text, &error))
        return usage_error(invalid_value(name, *text, "host[:slots][,host[:slots]...]: " + error));
      options.hosts = std::string(*text);
    } else if (name == "--hostfile") {
      const auto text = value();
      if (!text || text->empty()) return usage_error("option '--hostfile' requires a file name");
      options.hostfile = std::string(*text);
    } else if (name == "--launch-agent") {
      const auto text = value();
      if (!text) return usage_error("option '--launch-agent' requires a value");
      if (text->find_first_not_of(" \t") == std::string_view::npos)
        return usage_error(invalid_value(name, *text, "a command, such as ssh"));
      options.launch_agent = std::string(*text);
    } else if (attached && (name == "--help" || name == "--version" || name == "--tag-output" ||
                            name == "--report-bindings")) {
      return usage_error("option '" + std::string(name) + "' takes no value");
    } else {
      return usage_error("unknown option '" + std::string(arg) + "'");
    }
  }

  if (options.hosts && options.hostfile)
    return usage_error("--host and --hostfile cannot be combined");
  // With hosts, the slots say how many ranks fit; -n may then be left out.
  if (!have_ranks && !options.hosts && !options.hostfile)
    return usage_error("missing -n N (the number of ranks to start)");
  if (i >= args.size()) return usage_error("missing the program to run");
  options.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  result.action = Action::run;
  return result;
}

}  // namespace braidrun
