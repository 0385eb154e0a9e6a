#include "remote_command.hpp"

#include <algorithm>

namespace braidrun {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Characters no shell treats specially in the middle of a word. Not '^' (zsh's
// EXTENDED_GLOB negation, and a history character in some shells).
bool plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-./=:,+@%").find(c) != std::string_view::npos;
}

// ... nor at its start: zsh expands "=name" to the path of command name (EQUALS, on by
// default), and "%n" names a job there.
bool plain_word(std::string_view word) {
  return !word.empty() && word.front() != '=' && word.front() != '%' &&
         std::all_of(word.begin(), word.end(), plain);
}

}  // namespace

std::vector<std::string> split_agent(const std::string &agent) {
  std::vector<std::string> words;
  size_t at = 0;
  while ((at = agent.find_first_not_of(" \t", at)) != std::string::npos) {
    const size_t end = agent.find_first_of(" \t", at);
    words.push_back(agent.substr(at, end - at));
    at = end;
  }
  return words;
}

std::string shell_quote(std::string_view word) {
  if (plain_word(word)) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'')
      quoted += "'\\''";  // close, escaped quote, reopen
    else
      quoted += c;
  }
  return quoted + "'";
}

bool forwarded_to_remote_rank(std::string_view entry) {
  return starts_with(entry, "BRAID_") || starts_with(entry, "UCX_");
}

std::vector<std::string> remote_command(const std::vector<std::string> &agent,
                                        const std::string &host,
                                        const std::vector<std::string> &rank_environment,
                                        const std::vector<std::string> &command) {
  std::vector<std::string> argv = agent;
  argv.push_back(host);
  argv.push_back("env");
  for (const std::string &entry : rank_environment)
    if (forwarded_to_remote_rank(entry)) argv.push_back(shell_quote(entry));
  for (const std::string &word : command) argv.push_back(shell_quote(word));
  return argv;
}

std::vector<std::string> agent_environment(const char *const *inherited) {
  std::vector<std::string> environment;
  for (const char *const *entry = inherited; entry != nullptr && *entry != nullptr; ++entry)
    if (!starts_with(*entry, "BRAID_")) environment.emplace_back(*entry);
  return environment;
}

}  // namespace braidrun
