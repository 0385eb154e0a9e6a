#include "proc_maps.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace braid::verbs {
namespace {

uintptr_t parse_hex(const char *&p) {
  uintptr_t v = 0;
  for (;; ++p) {
    char c = *p;
    if (c >= '0' && c <= '9')
      v = v * 16 + static_cast<uintptr_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v = v * 16 + static_cast<uintptr_t>(c - 'a' + 10);
    else
      return v;
  }
}

// One line: "start-end perms offset dev inode [path]". Private anonymous: perms[3] == 'p' and
// inode 0 (shared memory, memfd and /dev/zero mappings have an inode).
bool parse_line(const char *line, Mapping *m) {
  const char *p = line;
  m->start = parse_hex(p);
  if (*p++ != '-') return false;
  m->end = parse_hex(p);
  if (*p++ != ' ') return false;
  const char *perms = p;
  if (std::strlen(perms) < 5) return false;
  p += 5;                                    // "rwxp "
  for (int field = 0; field < 2; ++field) {  // offset, dev
    while (*p != '\0' && *p != ' ') ++p;
    if (*p == ' ') ++p;
  }
  bool inode_zero = p[0] == '0' && (p[1] == ' ' || p[1] == '\0' || p[1] == '\n');
  // The main thread's stack grows down: growth extends a watched bottom page's registration to
  // new, missing pages, whose fault would wait for the monitor, possibly while this very thread
  // holds the monitor's lock. Thread stacks (fixed anonymous mappings) do not grow.
  bool stack = std::strstr(p, "[stack]") != nullptr;
  m->private_anonymous = perms[3] == 'p' && inode_zero && !stack;
  return true;
}

// Calls visit(mapping) for each line in address order until it returns false. False when the
// file cannot be read.
template <typename Visit>
bool for_each_mapping(Visit visit) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[8192];  // a line is at most a path (4096) and some 80 characters
  size_t have = 0;
  bool eof = false;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n < 0) {
      close(fd);
      return false;
    }
    eof = n == 0;
    have += static_cast<size_t>(n);
    buf[have] = '\0';
    char *line = buf;
    for (char *nl; (nl = std::strchr(line, '\n')) != nullptr || (eof && *line != '\0');) {
      if (nl != nullptr) *nl = '\0';
      Mapping m;
      if (parse_line(line, &m) && !visit(m)) {
        close(fd);
        return true;
      }
      line = nl != nullptr ? nl + 1 : line + std::strlen(line);
    }
    size_t rest = have - static_cast<size_t>(line - buf);
    if (eof || rest == sizeof buf - 1) break;  // done, or a line longer than the buffer
    std::memmove(buf, line, rest);
    have = rest;
  }
  close(fd);
  return true;
}

}  // namespace

bool mapping_at(uintptr_t addr, Mapping *out) {
  bool found = false;
  for_each_mapping([&](const Mapping &m) {
    if (m.end <= addr) return true;
    if (m.start <= addr) {
      *out = m;
      found = true;
    }
    return false;
  });
  return found;
}

bool private_anonymous(uintptr_t start, uintptr_t end) {
  uintptr_t next = start;  // the first address not yet known to be private anonymous
  bool ok = true;
  for_each_mapping([&](const Mapping &m) {
    if (m.end <= next) return true;
    if (m.start > next || !m.private_anonymous) {
      ok = false;  // a hole or another kind of mapping
      return false;
    }
    next = m.end;
    return next < end;
  });
  return ok && next >= end;
}

}  // namespace braid::verbs
