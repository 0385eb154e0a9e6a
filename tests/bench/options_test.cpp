// braid-bench's command line: defaults, every option, size suffixes, and bad values coming back
// as errors that name the option and the value (the program then exits 2).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "options.hpp"

namespace braid_bench {
namespace {

ParseResult parse(std::initializer_list<const char *> args) {
  std::vector<const char *> argv = {"braid-bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, DefaultsNeedOnlyTheCollective) {
  const ParseResult r = parse({"allreduce"});
  ASSERT_EQ(r.status, ParseResult::Status::run) << r.error;
  const Options &o = r.options;
  EXPECT_EQ(o.collective, Collective::allreduce);
  EXPECT_EQ(o.dtype, Dtype::float32);
  EXPECT_EQ(o.op, Op::sum);
  EXPECT_EQ(o.root, 0);
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 64u * 1024 * 1024);
  EXPECT_FALSE(o.iters.has_value());
  EXPECT_FALSE(o.warmup.has_value());
  EXPECT_EQ(o.mode, Mode::osu);
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.touch);
  EXPECT_TRUE(o.transport.empty());
  EXPECT_TRUE(o.algo.empty());
  EXPECT_TRUE(o.json_path.empty());
  EXPECT_TRUE(o.csv_path.empty());
}

TEST(Options, EveryOptionInBothForms) {
  const ParseResult r =
      parse({"--transport", "ucx",      "broadcast",  "--algo=binomial", "--dtype",     "bfloat16",
             "--op=max",    "--root",   "3",          "--min-bytes=1K",  "--max-bytes", "2M",
             "--iters",     "7",        "--warmup=0", "--mode",          "pipelined",   "--check",
             "--json",      "out.json", "--csv=o.csv"});
  ASSERT_EQ(r.status, ParseResult::Status::run) << r.error;
  const Options &o = r.options;
  EXPECT_EQ(o.collective, Collective::broadcast);
  EXPECT_EQ(o.transport, "ucx");
  EXPECT_EQ(o.algo, "binomial");
  EXPECT_EQ(o.dtype, Dtype::bfloat16);
  EXPECT_EQ(o.op, Op::max);
  EXPECT_EQ(o.root, 3);
  EXPECT_EQ(o.min_bytes, 1024u);
  EXPECT_EQ(o.max_bytes, 2u * 1024 * 1024);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.mode, Mode::pipelined);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.json_path, "out.json");
  EXPECT_EQ(o.csv_path, "o.csv");
}

TEST(Options, TouchIsAFlagOfOsuModeOnly) {
  const ParseResult r = parse({"allgather", "--touch", "--check"});
  ASSERT_EQ(r.status, ParseResult::Status::run) << r.error;
  EXPECT_TRUE(r.options.touch);
  const ParseResult valued = parse({"allreduce", "--touch=1"});
  EXPECT_EQ(valued.status, ParseResult::Status::error);
  EXPECT_NE(valued.error.find("--touch takes no value"), std::string::npos) << valued.error;
  const ParseResult pipelined = parse({"allreduce", "--touch", "--mode", "pipelined"});
  EXPECT_EQ(pipelined.status, ParseResult::Status::error);
  EXPECT_NE(pipelined.error.find("--touch needs --mode osu"), std::string::npos) << pipelined.error;
}

TEST(Options, EveryDtypeAndOpName) {
  for (const char *d : {"int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
                        "bfloat16", "float32", "float64"}) {
    const ParseResult r = parse({"allreduce", "--dtype", d});
    ASSERT_EQ(r.status, ParseResult::Status::run) << d << ": " << r.error;
    EXPECT_STREQ(name(r.options.dtype), d);
  }
  for (const char *op : {"sum", "prod", "min", "max"}) {
    const ParseResult r = parse({"allreduce", "--op", op});
    ASSERT_EQ(r.status, ParseResult::Status::run) << op << ": " << r.error;
    EXPECT_STREQ(name(r.options.op), op);
  }
}

TEST(Options, SizeSuffixesAre1024Based) {
  struct Case {
    const char *text;
    size_t bytes;
  };
  for (const Case &c : {Case{"8", 8}, Case{"100", 100}, Case{"64K", 65536}, Case{"64k", 65536},
                        Case{"64M", 64u << 20}, Case{"3m", 3u << 20}, Case{"1G", 1u << 30},
                        Case{"64G", 64ull << 30}}) {
    const ParseResult r = parse({"allreduce", "--min-bytes", "1", "--max-bytes", c.text});
    ASSERT_EQ(r.status, ParseResult::Status::run) << c.text << ": " << r.error;
    EXPECT_EQ(r.options.max_bytes, c.bytes) << c.text;
  }
}

TEST(Options, BadValuesAreErrorsNamingOptionAndValue) {
  struct Case {
    std::vector<const char *> args;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {{"allreduce", "--dtype", "float8"}, "--dtype 'float8': not a dtype; valid: int8"},
      {{"allreduce", "--op", "avg"}, "--op 'avg': not an op"},
      {{"allreduce", "--mode", "fast"}, "--mode 'fast': not a mode"},
      {{"allreduce", "--iters", "0"}, "--iters '0'"},
      {{"allreduce", "--iters", "-1"}, "--iters '-1'"},
      {{"allreduce", "--iters", "ten"}, "--iters 'ten'"},
      {{"allreduce", "--iters", "12x"}, "--iters '12x'"},
      {{"allreduce", "--warmup", "x"}, "--warmup 'x'"},
      {{"broadcast", "--root", "-1"}, "--root '-1'"},
      {{"allreduce", "--min-bytes", "0"}, "--min-bytes '0': must be at least 1 byte"},
      {{"allreduce", "--min-bytes", "12Q"}, "--min-bytes '12Q': unknown suffix 'Q'"},
      {{"allreduce", "--min-bytes", "K"}, "--min-bytes 'K': not a size"},
      {{"allreduce", "--max-bytes", "64KB"}, "--max-bytes '64KB': unknown suffix 'KB'"},
      {{"allreduce", "--max-bytes", "65G"}, "--max-bytes '65G': larger than the 64G limit"},
      {{"allreduce", "--max-bytes", "99999999999999999999"}, "larger than the 64G limit"},
      {{"allreduce", "--min-bytes", "1M", "--max-bytes", "64K"},
       "--min-bytes 1048576 is larger than --max-bytes 65536"},
      {{"allreduce", "--iters"}, "--iters: missing value"},
      {{"allreduce", "--json="}, "--json: empty value"},
      {{"allreduce", "--check=yes"}, "--check takes no value"},
      {{"allreduce", "--fast"}, "unknown option '--fast'"},
      {{"allreduce", "-x"}, "unknown option '-x'"},
      {{"allreduce", "--iter=5"}, "unknown option '--iter'"},
      {{}, "missing the collective"},
      {{"--check"}, "missing the collective"},
      {{"alltoallw"}, "'alltoallw' is not a collective"},
      {{"allreduce", "broadcast"}, "unexpected argument 'broadcast'"},
  };
  for (const Case &c : cases) {
    std::vector<const char *> argv = {"braid-bench"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const ParseResult r = parse_options(static_cast<int>(argv.size()), argv.data());
    EXPECT_EQ(r.status, ParseResult::Status::error) << c.message_part;
    EXPECT_NE(r.error.find(c.message_part), std::string::npos)
        << "expected '" << c.message_part << "' in '" << r.error << "'";
  }
}

TEST(Options, HelpWinsAnywhere) {
  EXPECT_EQ(parse({"--help"}).status, ParseResult::Status::help);
  EXPECT_EQ(parse({"-h"}).status, ParseResult::Status::help);
  EXPECT_EQ(parse({"allreduce", "--dtype", "bogus", "--help"}).status, ParseResult::Status::help);
}

TEST(Options, HelpDocumentsEveryOption) {
  for (Flavor f : {Flavor::braid, Flavor::mpi}) {
    const std::string help = help_text("braid-bench", f);
    for (const char *word :
         {"allreduce", "broadcast",  "barrier",     "--transport", "--algo",  "--dtype",
          "--op",      "--root",     "--min-bytes", "--max-bytes", "--iters", "--warmup",
          "--mode",    "osu",        "pipelined",   "--check",     "--touch", "--json",
          "--csv",     "--help",     "bfloat16",    "float64",     "prod",    "busbw",
          "algbw",     "Exit status"})
      EXPECT_NE(help.find(word), std::string::npos) << word;
  }
  EXPECT_NE(help_text("braid-bench", Flavor::braid).find("BRAID_ALLREDUCE_ALGO"),
            std::string::npos);
  EXPECT_NE(help_text("braid-bench-mpi", Flavor::mpi).find("\"mpi\""), std::string::npos);
}

}  // namespace
}  // namespace braid_bench
