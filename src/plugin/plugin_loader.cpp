#include "plugin/plugin_loader.hpp"

#include "error.hpp"
#include "log.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace braid::detail {
namespace {

constexpr int kNewestKnownAbi = 2;
constexpr int kOldestKnownAbi = 1;
constexpr int kHighestProbedAbi = 9;  // so a newer plugin is reported by the versions it has

std::string parent_dir(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || path.empty() || path.front() != '/') return {};
  return path.substr(0, slash);
}

// Whether `addr` lies in the main program (the first object dl_iterate_phdr reports) rather
// than in a shared library. dladdr cannot tell: for the main program it reports argv[0], which
// need not be a path at all when the program was found through PATH.
bool in_main_program(const void *addr) {
  struct Query {
    uintptr_t addr;
    bool found;
  } q{reinterpret_cast<uintptr_t>(addr), false};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) -> int {
        auto *query = static_cast<Query *>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (query->addr >= start && query->addr < start + ph.p_memsz) query->found = true;
        }
        return 1;  // the first object is the main program; stop there
      },
      &q);
  return q.found;
}

// The directory of the module this code lives in: libbraid.so's, or, when braid is linked
// statically into a tool (braid-info), the tool's <prefix>/bin, whose plugins live in
// <prefix>/lib like a relocatable install's ($ORIGIN/../lib).
std::vector<std::string> directories_of_this_module() {
  const void *self = reinterpret_cast<const void *>(&plugin_search_dirs);
  char resolved[4096];
  if (in_main_program(self)) {
    if (realpath("/proc/self/exe", resolved) == nullptr) return {};
    std::string prefix = parent_dir(parent_dir(resolved));
    if (prefix.empty()) return {};
    return {prefix + "/lib", prefix + "/" + BRAID_INSTALL_LIBDIR_NAME};
  }
  Dl_info info{};
  if (dladdr(self, &info) == 0 || info.dli_fname == nullptr) return {};
  std::string module = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
  std::string dir = parent_dir(module);
  if (dir.empty()) return {};
  return {dir};
}

bool file_exists(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string plugin_file(const std::string &name) {
  return "libbraid-transport-" + name + ".so";
}

bool valid_plugin_name(const std::string &name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

}  // namespace

std::vector<std::string> plugin_search_dirs() {
  std::vector<std::string> dirs;
  auto add = [&dirs](const std::string &dir) {
    if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  };
  for (const std::string &dir : directories_of_this_module()) add(dir);
#ifdef BRAID_INSTALL_LIBDIR
  add(BRAID_INSTALL_LIBDIR);
#endif
  if (const char *path = std::getenv("BRAID_PLUGIN_PATH")) {
    std::string list = path;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      std::string dir = list.substr(start, end - start);
      // A relative entry would make the loaded code depend on the working directory.
      if (!dir.empty() && dir.front() == '/')
        add(dir);
      else if (!dir.empty())
        log(LogLevel::warn, "BRAID_PLUGIN_PATH entry '", dir, "' is not absolute; ignored");
      start = end + 1;
    }
  }
  return dirs;
}

bool open_plugin(const std::string &name, Plugin *out, std::string *why) {
  why->clear();
  if (!valid_plugin_name(name)) {
    *why = cat("'", name, "' is not a valid transport name");
    return false;
  }
  const std::vector<std::string> dirs = plugin_search_dirs();
  for (const std::string &dir : dirs) {
    std::string path = dir + "/" + plugin_file(name);
    if (!file_exists(path)) continue;
    // RTLD_NODELETE: a plugin's libraries (libibverbs, librdmacm, UCX) keep global state that is
    // only reachable through their own data; unmapping them after a failed probe would strand it
    // (LeakSanitizer reports it) and a later dlopen would initialise them a second time.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      *why += cat(why->empty() ? "" : "; ", path, ": ", dlerror());
      continue;
    }
    std::string found;
    const braid_transport_v2_t *ops = nullptr;
    int abi = 0;
    for (int v = kHighestProbedAbi; v >= 1; --v) {
      void *sym = dlsym(handle, cat("braid_transport_v", v).c_str());
      if (sym == nullptr) continue;
      found += cat(found.empty() ? "" : ",", "v", v);
      // v1 and v2 share the function table; v1 plugins simply ignore the args v2 appended.
      if (ops == nullptr && v >= kOldestKnownAbi && v <= kNewestKnownAbi) {
        ops = static_cast<const braid_transport_v2_t *>(sym);
        abi = v;
      }
    }
    if (ops == nullptr) {
      *why += cat(why->empty() ? "" : "; ", path, ": exports ABI versions {", found,
                  "} but this braid needs v", kOldestKnownAbi,
                  kNewestKnownAbi > kOldestKnownAbi ? cat("..v", kNewestKnownAbi) : "");
      dlclose(handle);
      continue;
    }
    if (ops->name == nullptr || name != ops->name) {
      *why += cat(why->empty() ? "" : "; ", path, ": plugin calls itself '",
                  ops->name ? ops->name : "(null)", "'");
      dlclose(handle);
      continue;
    }
    *out = Plugin{name, path, handle, ops, abi};
    why->clear();  // earlier directories' refusals do not matter once one loaded
    return true;
  }
  if (why->empty()) {
    std::string list;
    for (const auto &d : dirs) list += cat(list.empty() ? "" : ", ", d);
    *why = cat(plugin_file(name), " not found in {", list, "}");
  }
  return false;
}

std::vector<std::string> discover_plugins() {
  const std::string prefix = "libbraid-transport-";
  const std::string suffix = ".so";
  std::vector<std::string> names;
  for (const std::string &dir : plugin_search_dirs()) {
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (dirent *entry = readdir(d)) {
      std::string file = entry->d_name;
      if (file.size() > prefix.size() + suffix.size() && file.starts_with(prefix) &&
          file.ends_with(suffix)) {
        std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
        if (valid_plugin_name(name) && std::find(names.begin(), names.end(), name) == names.end())
          names.push_back(name);
      }
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Plugin select_transport(const std::string &requested, std::vector<PluginProblem> *problems) {
  std::vector<std::string> candidates;
  if (requested == "auto")
    candidates = {"verbs", "ucx"};
  else
    candidates = {requested};
  for (const std::string &name : candidates) {
    Plugin plugin;
    std::string why;
    if (!open_plugin(name, &plugin, &why)) {
      problems->push_back({name, why});
      continue;
    }
    char reason[512] = {0};
    if (plugin.ops->probe != nullptr && plugin.ops->probe(reason, sizeof reason) == 0) {
      problems->push_back({name, cat(plugin.path, ": ", reason)});
      dlclose(plugin.handle);
      continue;
    }
    return plugin;
  }
  std::string tried;
  for (const auto &p : *problems) tried += cat("\n  ", p.name, ": ", p.detail);
  fail(requested == "auto" ? BRAID_ERR_TRANSPORT : BRAID_ERR_UNSUPPORTED,
       "BRAID_TRANSPORT=", requested, ": no transport could be loaded; tried:", tried);
}

}  // namespace braid::detail
