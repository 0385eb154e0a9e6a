// The transport plugin loader: search directories, the real ucx plugin from the build tree, and
// the test plugins in tests/unit/plugins that each break one rule of the ABI. The test plugins
// live in their own directory (BRAID_TEST_PLUGIN_DIR) and are reached only via BRAID_PLUGIN_PATH.
#include "plugin/plugin_loader.hpp"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "error.hpp"

#ifndef BRAID_TEST_PLUGIN_DIR
#error "BRAID_TEST_PLUGIN_DIR must name the directory of the test plugins"
#endif

namespace braid::detail {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string kTestPluginDir = BRAID_TEST_PLUGIN_DIR;

// Sets (or unsets, with nullopt) an environment variable for one scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
  const char *name_;
  std::optional<std::string> old_;
};

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "braid-plugin-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// <build>/lib: the unit test binary lives in <build>/bin and links braid_core statically, so
// the loader looks in <exe dir>/../lib, where the build puts the real plugins.
std::string build_lib_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path().parent_path() / "lib").string();
}

std::string ucx_plugin_path() {
  return build_lib_dir() + "/libbraid-transport-ucx.so";
}

bool ucx_built() {
  return fs::is_regular_file(ucx_plugin_path());
}

std::string test_plugin(const std::string &name) {
  return kTestPluginDir + "/libbraid-transport-" + name + ".so";
}

// open_plugin expected to refuse `name`; returns the explanation.
std::string refusal(const std::string &name) {
  Plugin plugin;
  std::string why;
  EXPECT_FALSE(open_plugin(name, &plugin, &why)) << name << " was loaded from " << plugin.path;
  EXPECT_EQ(plugin.handle, nullptr);
  EXPECT_EQ(plugin.ops, nullptr);
  EXPECT_FALSE(why.empty());
  return why;
}

// select_transport expected to throw; returns the Failure.
Failure select_failure(const std::string &requested, std::vector<PluginProblem> *problems) {
  try {
    Plugin p = select_transport(requested, problems);
    ADD_FAILURE() << "select_transport(" << requested << ") chose " << p.path;
  } catch (const Failure &f) {
    return f;
  }
  return Failure(BRAID_SUCCESS, "<no failure>");
}

// --- Search directories ---------------------------------------------------------------------

TEST(PluginLoader, SearchDirsStartWithTheBuildLibDir) {
  ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
  const std::vector<std::string> dirs = plugin_search_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.front(), build_lib_dir());
  EXPECT_THAT(dirs, Contains(std::string(BRAID_INSTALL_LIBDIR)));
  for (const std::string &d : dirs) EXPECT_EQ(d.front(), '/') << d;
  EXPECT_EQ(std::set<std::string>(dirs.begin(), dirs.end()).size(), dirs.size());
  EXPECT_THAT(dirs, Not(Contains(kTestPluginDir)));
}

TEST(PluginLoader, SearchDirsKeepAbsolutePathEntriesInOrderWithoutDuplicates) {
  std::vector<std::string> base;
  {
    ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
    base = plugin_search_dirs();
  }
  ScopedEnv env("BRAID_PLUGIN_PATH",
                "relative/dir:/opt/braid/two::./dot:/opt/braid/one:" + base.front() +
                    ":/opt/braid/two:plugins:..:" + "/opt/braid/three:");
  std::vector<std::string> expected = base;
  expected.insert(expected.end(), {"/opt/braid/two", "/opt/braid/one", "/opt/braid/three"});
  EXPECT_EQ(plugin_search_dirs(), expected);
}

TEST(PluginLoader, SearchDirsIgnoreEmptyAndRelativeOnlyPath) {
  std::vector<std::string> base;
  {
    ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
    base = plugin_search_dirs();
  }
  for (const char *path : {"", ":", ":::", ".", "lib:../lib:./x", "~/plugins"}) {
    ScopedEnv env("BRAID_PLUGIN_PATH", path);
    EXPECT_EQ(plugin_search_dirs(), base) << "BRAID_PLUGIN_PATH='" << path << "'";
  }
}

// Regression (was a bug): for a binary that links braid statically (braid-info, this test),
// the loader finds <exe dir>/../lib through dladdr(), which reports argv[0]. Started through PATH
// (argv[0] has no slash) from another directory, realpath(argv[0]) fails, the module no longer
// matches /proc/self/exe, and <exe dir>/../lib silently drops out of the search list.
// Reproduced by re-running SearchDirsStartWithTheBuildLibDir through PATH from "/".
TEST(PluginLoader, BuildLibDirIsFoundWhenStartedThroughPath) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  ASSERT_FALSE(ec) << ec.message();
  ScopedEnv path("PATH", exe.parent_path().string());
  std::string arg0 = exe.filename().string();
  std::string filter = "--gtest_filter=PluginLoader.SearchDirsStartWithTheBuildLibDir";
  char *argv[] = {arg0.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  ASSERT_EQ(posix_spawn_file_actions_init(&actions), 0);
  ASSERT_EQ(posix_spawn_file_actions_addchdir_np(&actions, "/"), 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, arg0.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_EQ(rc, 0) << "posix_spawnp failed";
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the search list lost " << build_lib_dir();
}

// --- The real ucx plugin --------------------------------------------------------------------

TEST(PluginLoader, OpensUcxFromTheBuildTree) {
  if (!ucx_built()) GTEST_SKIP() << "ucx plugin not built (no UCX): " << ucx_plugin_path();
  ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
  Plugin plugin;
  std::string why = "stale";
  ASSERT_TRUE(open_plugin("ucx", &plugin, &why)) << why;
  EXPECT_EQ(why, "");
  EXPECT_EQ(plugin.name, "ucx");
  EXPECT_EQ(plugin.path, ucx_plugin_path());
  ASSERT_NE(plugin.handle, nullptr);
  ASSERT_NE(plugin.ops, nullptr);
  EXPECT_STREQ(plugin.ops->name, "ucx");
  EXPECT_EQ(plugin.ops, dlsym(plugin.handle, "braid_transport_v2"));
  EXPECT_EQ(plugin.abi, 2);
  EXPECT_NE(plugin.ops->probe, nullptr);
  EXPECT_NE(plugin.ops->init, nullptr);
  EXPECT_NE(plugin.ops->isend, nullptr);
  EXPECT_NE(plugin.ops->irecv, nullptr);
  EXPECT_NE(plugin.ops->test, nullptr);
  EXPECT_NE(plugin.ops->progress, nullptr);
  EXPECT_NE(plugin.ops->finalize, nullptr);
}

// --- Broken test plugins --------------------------------------------------------------------

TEST(PluginLoader, TestPluginsAreNotInTheRealPluginDir) {
  EXPECT_NE(fs::weakly_canonical(kTestPluginDir), fs::weakly_canonical(build_lib_dir()));
  for (const char *name : {"future", "liar", "broken", "unusable", "dual", "both"}) {
    EXPECT_TRUE(fs::is_regular_file(test_plugin(name))) << test_plugin(name);
    EXPECT_FALSE(fs::exists(build_lib_dir() + "/libbraid-transport-" + name + ".so")) << name;
  }
}

TEST(PluginLoader, NewerAbiOnlyIsRefusedNamingVersions) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  const std::string why = refusal("future");
  EXPECT_THAT(why, HasSubstr(test_plugin("future") + ": "));
  EXPECT_THAT(why, HasSubstr("exports ABI versions {v9}"));
  EXPECT_THAT(why, HasSubstr("needs v1..v2"));
}

TEST(PluginLoader, KnownAbiIsTakenWhenNewerOnesAreExportedToo) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  Plugin plugin;
  std::string why;
  ASSERT_TRUE(open_plugin("dual", &plugin, &why)) << why;
  EXPECT_EQ(plugin.path, test_plugin("dual"));
  ASSERT_NE(plugin.ops, nullptr);
  EXPECT_STREQ(plugin.ops->name, "dual");
  EXPECT_EQ(plugin.ops, dlsym(plugin.handle, "braid_transport_v1"));
  EXPECT_EQ(plugin.abi, 1);  // a v1-only plugin (plus an unknown v3) still loads under ABI v2
}

TEST(PluginLoader, V2IsPreferredOverV1WhenBothAreExported) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  Plugin plugin;
  std::string why;
  ASSERT_TRUE(open_plugin("both", &plugin, &why)) << why;
  ASSERT_NE(plugin.ops, nullptr);
  EXPECT_EQ(plugin.abi, 2);
  EXPECT_EQ(plugin.ops, dlsym(plugin.handle, "braid_transport_v2"));
  EXPECT_NE(plugin.ops, dlsym(plugin.handle, "braid_transport_v1"));
}

TEST(PluginLoader, V2InitArgsExtendV1AsASuffix) {
  // A v1 plugin reads the struct through its own (shorter) definition: every v1 field must keep
  // its offset, and the v2 fields must come after all of them.
  EXPECT_GT(offsetof(braid_transport_init_args_t, numa_node),
            offsetof(braid_transport_init_args_t, log));
  EXPECT_GT(offsetof(braid_transport_init_args_t, free_on_node),
            offsetof(braid_transport_init_args_t, alloc_on_node));
  EXPECT_EQ(BRAID_TRANSPORT_ABI_VERSION, 2);
}

TEST(PluginLoader, PluginWhoseNameDisagreesWithItsFileIsRefused) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  const std::string why = refusal("liar");
  EXPECT_THAT(why, HasSubstr(test_plugin("liar") + ": "));
  EXPECT_THAT(why, HasSubstr("calls itself 'ucx'"));
}

TEST(PluginLoader, PluginThatFailsToLoadIsRefusedWithDlerror) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  const std::string why = refusal("broken");
  EXPECT_THAT(why, HasSubstr(test_plugin("broken") + ": "));
  EXPECT_THAT(why, HasSubstr("undefined symbol"));
  EXPECT_THAT(why, HasSubstr("braid_test_plugin_missing_symbol"));
}

TEST(PluginLoader, UnloadableFileIsRefusedWithDlerror) {
  TempDir dir;
  std::ofstream(dir.path() + "/libbraid-transport-empty.so") << "not an ELF file\n";
  ScopedEnv env("BRAID_PLUGIN_PATH", dir.path());
  const std::string why = refusal("empty");
  EXPECT_THAT(why, HasSubstr(dir.path() + "/libbraid-transport-empty.so: "));
  EXPECT_THAT(why, Not(HasSubstr("not found")));
}

TEST(PluginLoader, EveryRefusedCandidateIsDescribed) {
  // The same name in two directories, both refused: both files are named, in search order.
  TempDir dir;
  fs::copy_file(test_plugin("liar"), dir.path() + "/libbraid-transport-future.so");
  ScopedEnv env("BRAID_PLUGIN_PATH", dir.path() + ":" + kTestPluginDir);
  const std::string why = refusal("future");
  const size_t first = why.find(dir.path() + "/libbraid-transport-future.so: plugin calls itself");
  const size_t second = why.find(test_plugin("future") + ": exports ABI versions {v9}");
  ASSERT_NE(first, std::string::npos) << why;
  ASSERT_NE(second, std::string::npos) << why;
  EXPECT_LT(first, second);
  EXPECT_THAT(why, HasSubstr("; "));
}

TEST(PluginLoader, FirstDirectoryWithAUsablePluginWins) {
  TempDir dir;
  fs::copy_file(test_plugin("unusable"), dir.path() + "/libbraid-transport-unusable.so");
  {
    ScopedEnv env("BRAID_PLUGIN_PATH", dir.path() + ":" + kTestPluginDir);
    Plugin plugin;
    std::string why;
    ASSERT_TRUE(open_plugin("unusable", &plugin, &why)) << why;
    EXPECT_EQ(plugin.path, dir.path() + "/libbraid-transport-unusable.so");
  }
  {
    // A refused file in an earlier directory falls through to the next one.
    fs::copy_file(test_plugin("liar"), dir.path() + "/libbraid-transport-dual.so");
    ScopedEnv env("BRAID_PLUGIN_PATH", dir.path() + ":" + kTestPluginDir);
    Plugin plugin;
    std::string why;
    ASSERT_TRUE(open_plugin("dual", &plugin, &why)) << why;
    EXPECT_EQ(plugin.path, test_plugin("dual"));
    EXPECT_STREQ(plugin.ops->name, "dual");
  }
}

// --- Names ----------------------------------------------------------------------------------

TEST(PluginLoader, InvalidNamesAreRefusedWithoutTouchingTheFilesystem) {
  // Decoy files where a name spliced into a path would lead: if the loader looked, it would find
  // them and its message would name them (dlopen fails on an empty file).
  TempDir dir;
  const std::string plugins = dir.path() + "/plugins";
  fs::create_directories(plugins + "/libbraid-transport-..");
  fs::create_directories(plugins + "/libbraid-transport-a");
  for (const char *decoy : {"/libbraid-transport-../evil.so", "/libbraid-transport-a/b.so",
                            "/libbraid-transport-.so", "/libbraid-transport-UCX.so",
                            "/libbraid-transport-ucx.so.so", "/libbraid-transport- ucx.so"})
    std::ofstream(plugins + decoy) << "";
  ScopedEnv env("BRAID_PLUGIN_PATH", plugins);
  for (const std::string name :
       {"../evil", "a/b", "", "UCX", "ucx.so", " ucx", "ucx\n", "/etc/passwd", "..", "."}) {
    SCOPED_TRACE("name '" + name + "'");
    const std::string why = refusal(name);
    EXPECT_EQ(why, "'" + name + "' is not a valid transport name");
    EXPECT_THAT(why, Not(HasSubstr(plugins)));

    std::vector<PluginProblem> problems;
    Failure f = select_failure(name, &problems);
    EXPECT_EQ(f.code(), BRAID_ERR_UNSUPPORTED);
    EXPECT_THAT(f.message(), HasSubstr("is not a valid transport name"));
    EXPECT_THAT(f.message(), Not(HasSubstr(plugins)));
  }
}

TEST(PluginLoader, ValidNameCharacters) {
  // Valid names that do not exist are searched for (and reported as not found).
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  for (const char *name : {"x", "my_plugin-2", "0"}) {
    const std::string why = refusal(name);
    EXPECT_THAT(why, HasSubstr(std::string("libbraid-transport-") + name + ".so not found in {"));
  }
}

// --- select_transport -----------------------------------------------------------------------

TEST(PluginLoader, SelectMissingTransportNamesFileAndEveryDirectory) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir + ":/nonexistent/braid/plugins");
  const std::vector<std::string> dirs = plugin_search_dirs();
  ASSERT_THAT(dirs, Contains(kTestPluginDir));
  std::vector<PluginProblem> problems;
  Failure f = select_failure("doesnotexist", &problems);
  EXPECT_EQ(f.code(), BRAID_ERR_UNSUPPORTED);
  EXPECT_THAT(f.message(), HasSubstr("BRAID_TRANSPORT=doesnotexist"));
  EXPECT_THAT(f.message(), HasSubstr("libbraid-transport-doesnotexist.so not found in {"));
  for (const std::string &d : dirs) EXPECT_THAT(f.message(), HasSubstr(d));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].name, "doesnotexist");
  std::string list;
  for (const std::string &d : dirs) list += (list.empty() ? "" : ", ") + d;
  EXPECT_EQ(problems[0].detail, "libbraid-transport-doesnotexist.so not found in {" + list + "}");
}

// Auto falls back to UCX where verbs cannot serve: its plugin is absent (a build without
// rdma-core) or, as on the CI machines (verbs built, no RDMA device), its probe says no. Skipped
// only on a host with an active RDMA port, where auto rightly takes verbs.
TEST(PluginLoader, SelectAutoPicksUcxWhenVerbsCannotServe) {
  if (!ucx_built()) GTEST_SKIP() << "ucx plugin not built (no UCX)";
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  Plugin verbs;
  std::string why;
  const bool verbs_built = open_plugin("verbs", &verbs, &why);
  char reason[512] = {};  // a probe returns 0 when the plugin cannot serve here, and says why
  if (verbs_built && (verbs.ops->probe == nullptr || verbs.ops->probe(reason, sizeof reason) != 0))
    GTEST_SKIP() << "this host has an RDMA port: auto takes verbs";
  std::vector<PluginProblem> problems;
  Plugin chosen = select_transport("auto", &problems);
  EXPECT_EQ(chosen.name, "ucx");
  EXPECT_EQ(chosen.path, ucx_plugin_path());
  ASSERT_NE(chosen.ops, nullptr);
  EXPECT_STREQ(chosen.ops->name, "ucx");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].name, "verbs");
  if (verbs_built) {  // the probe's own reason, after the plugin's path
    EXPECT_EQ(problems[0].detail, verbs.path + ": " + reason);
    return;
  }
  EXPECT_THAT(problems[0].detail, HasSubstr("libbraid-transport-verbs.so not found in {"));
  EXPECT_THAT(problems[0].detail, HasSubstr(build_lib_dir()));
}

TEST(PluginLoader, SelectExplicitUcx) {
  if (!ucx_built()) GTEST_SKIP() << "ucx plugin not built (no UCX)";
  ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
  std::vector<PluginProblem> problems;
  Plugin chosen = select_transport("ucx", &problems);
  EXPECT_EQ(chosen.name, "ucx");
  EXPECT_THAT(problems, IsEmpty());
}

TEST(PluginLoader, SelectReportsTheProbeReason) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  // The plugin itself loads; only its probe says no.
  {
    Plugin plugin;
    std::string why;
    ASSERT_TRUE(open_plugin("unusable", &plugin, &why)) << why;
  }
  std::vector<PluginProblem> problems;
  Failure f = select_failure("unusable", &problems);
  EXPECT_EQ(f.code(), BRAID_ERR_UNSUPPORTED);
  EXPECT_THAT(f.message(), AllOf(HasSubstr("BRAID_TRANSPORT=unusable"),
                                 HasSubstr(test_plugin("unusable") + ": no device here")));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].name, "unusable");
  EXPECT_EQ(problems[0].detail, test_plugin("unusable") + ": no device here");
}

TEST(PluginLoader, SelectReportsEachBrokenPlugin) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  struct Case {
    const char *name;
    const char *detail;
  };
  for (const Case &c :
       {Case{"future", "exports ABI versions {v9} but this braid needs v1..v2"},
        Case{"liar", "plugin calls itself 'ucx'"}, Case{"broken", "undefined symbol"}}) {
    SCOPED_TRACE(c.name);
    std::vector<PluginProblem> problems;
    Failure f = select_failure(c.name, &problems);
    EXPECT_EQ(f.code(), BRAID_ERR_UNSUPPORTED);
    EXPECT_THAT(f.message(), HasSubstr(std::string("BRAID_TRANSPORT=") + c.name));
    EXPECT_THAT(f.message(), HasSubstr(test_plugin(c.name)));
    EXPECT_THAT(f.message(), HasSubstr(c.detail));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].name, c.name);
    EXPECT_THAT(problems[0].detail, HasSubstr(c.detail));
  }
}

// --- discover_plugins -----------------------------------------------------------------------

TEST(PluginLoader, DiscoverListsUcxAndTheTestPlugins) {
  ScopedEnv env("BRAID_PLUGIN_PATH", kTestPluginDir);
  const std::vector<std::string> names = discover_plugins();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const char *name : {"broken", "dual", "future", "liar", "unusable"})
    EXPECT_THAT(names, Contains(std::string(name)));
  if (ucx_built()) {
    EXPECT_THAT(names, Contains(std::string("ucx")));
  }
}

TEST(PluginLoader, DiscoverWithoutPluginPathDoesNotSeeTheTestPlugins) {
  ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
  const std::vector<std::string> names = discover_plugins();
  for (const char *name : {"broken", "dual", "future", "liar", "unusable"})
    EXPECT_THAT(names, Not(Contains(std::string(name))));
  if (ucx_built()) {
    EXPECT_THAT(names, Contains(std::string("ucx")));
  }
}

TEST(PluginLoader, DiscoverSkipsFilesThatAreNotPluginNames) {
  TempDir dir;
  for (const char *file :
       {"libbraid-transport-.so", "libbraid-transport-UPPER.so", "libbraid-transport-ok.so.1",
        "libbraid-transport-ok.txt", "braid-transport-nolib.so", "libbraid-transport-a.b.so",
        "libbraid-transport-good_one.so"})
    std::ofstream(dir.path() + "/" + file) << "";
  // A name found twice (two directories) is listed once.
  TempDir dir2;
  std::ofstream(dir2.path() + "/libbraid-transport-good_one.so") << "";
  std::vector<std::string> base;
  {
    ScopedEnv env("BRAID_PLUGIN_PATH", std::nullopt);
    base = discover_plugins();
  }
  ScopedEnv env("BRAID_PLUGIN_PATH", dir.path() + ":" + dir2.path());
  std::vector<std::string> names = discover_plugins();
  std::vector<std::string> added;
  std::set_difference(names.begin(), names.end(), base.begin(), base.end(),
                      std::back_inserter(added));
  EXPECT_THAT(added, ElementsAre("good_one"));
}

}  // namespace
}  // namespace braid::detail
