// The whole run over a fake one-rank backend: the timing loop's call pattern, the rows, the
// files, the exit status, and --check counting a result the backend corrupts on purpose.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver.hpp"
#include "timing.hpp"

namespace braid_bench {
namespace {

// One rank. Allreduce out of place copies (the sum over one rank); in-place calls are the
// driver's own statistics and pass through. corrupt_every_call > 0 flips a bit in that many
// leading elements of every out-of-place result (and of every broadcast buffer).
class FakeBackend final : public Backend {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string transport() const override { return "fake"; }
  std::string algorithm(Collective, size_t bytes, size_t) const override {
    return std::string("fake").append(std::to_string(bytes));
  }
  BuildInfo build_info() const override { return {"0.1.0", "cc", "Test", "fake 1"}; }
  void allreduce(const void *sendbuf, void *recvbuf, size_t count, Dtype d, Op) override {
    if (sendbuf == recvbuf) return;
    ++data_calls;
    std::memcpy(recvbuf, sendbuf, count * dtype_size(d));
    corrupt(recvbuf, count, d);
  }
  void broadcast(void *buf, size_t count, Dtype d, int) override {
    ++data_calls;
    corrupt(buf, count, d);
  }
  void barrier() override { ++barriers; }
  // The rest of the set on one rank: the one block goes from the send to the receive buffer.
  void reduce(const void *s, void *r, size_t count, Dtype d, Op, int) override {
    copy(s, r, count, d);
  }
  void allgather(const void *s, void *r, size_t count, Dtype d) override { copy(s, r, count, d); }
  void allgatherv(const void *s, size_t count, void *r, const size_t *, const size_t *,
                  Dtype d) override {
    copy(s, r, count, d);
  }
  void reduce_scatter(const void *s, void *r, size_t count, Dtype d, Op) override {
    copy(s, r, count, d);
  }
  void alltoall(const void *s, void *r, size_t count, Dtype d) override { copy(s, r, count, d); }
  void alltoallv(const void *s, const size_t *counts, const size_t *, void *r, const size_t *,
                 const size_t *, Dtype d) override {
    copy(s, r, counts[0], d);
  }
  void gather(const void *s, void *r, size_t count, Dtype d, int) override { copy(s, r, count, d); }
  void scatter(const void *s, void *r, size_t count, Dtype d, int) override {
    copy(s, r, count, d);
  }

  size_t corrupt_every_call = 0;
  int data_calls = 0;
  int barriers = 0;

 private:
  void copy(const void *s, void *r, size_t count, Dtype d) {
    ++data_calls;
    std::memcpy(r, s, count * dtype_size(d));
    corrupt(r, count, d);
  }
  void corrupt(void *buf, size_t count, Dtype d) {
    const size_t n = corrupt_every_call < count ? corrupt_every_call : count;
    for (size_t i = 0; i < n; ++i) static_cast<unsigned char *>(buf)[i * dtype_size(d)] ^= 1;
  }
};

// Captures a FILE* stream as a string.
class Capture {
 public:
  Capture() : file_(open_memstream(&data_, &size_)) {}
  ~Capture() {
    if (file_) std::fclose(file_);
    std::free(data_);
  }
  std::FILE *file() const { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char *data_ = nullptr;
  size_t size_ = 0;
  std::FILE *file_;
};

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count_of(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

class Driver : public ::testing::Test {
 protected:
  void SetUp() override {
    settings.out = out.file();
    settings.err = err.file();
    settings.progress_after_s = 1e9;
    options.min_bytes = 8;
    options.max_bytes = 4096;
    options.iters = 3;
    options.warmup = 1;
    dir = ::testing::TempDir();
  }
  FakeBackend fake;
  Options options;
  Capture out, err;
  DriverSettings settings;
  std::string dir;
};

TEST_F(Driver, TimingLoopCallPattern) {
  int calls = 0;
  auto call = [&] { ++calls; };
  EXPECT_GE(time_per_call(fake, Mode::osu, 5, 2, call), 0.0);
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(fake.barriers, 7);  // one before every call, warm-up included
  calls = 0;
  fake.barriers = 0;
  time_per_call(fake, Mode::pipelined, 5, 2, call);
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(fake.barriers, 1);  // only before the timed block
}

TEST_F(Driver, AcrossRanksOfOneRank) {
  const Latency l = across_ranks(fake, 2.5e-6);
  EXPECT_DOUBLE_EQ(l.avg_us, 2.5);
  EXPECT_DOUBLE_EQ(l.min_us, 2.5);
  EXPECT_DOUBLE_EQ(l.max_us, 2.5);
}

TEST_F(Driver, SweepPrintsOneRowPerSizeAndWritesFiles) {
  options.json_path = dir + "bench_driver.json";
  options.csv_path = dir + "bench_driver.csv";
  options.check = true;
  ASSERT_EQ(run_benchmark(options, fake, settings), 0) << err.text();
  const std::string table = out.text();
  EXPECT_EQ(count_of(table, "\n"), 3u + 10u) << table;  // 3 header lines, 8 .. 4096 bytes
  EXPECT_NE(table.find("fake4096"), std::string::npos);
  EXPECT_EQ(fake.data_calls, 10 * (1 + 3 + 1));  // warm-up, timed, check
  const std::string json = read_file(options.json_path);
  EXPECT_EQ(count_of(json, "\"bytes\":"), 10u);
  EXPECT_EQ(count_of(json, "\"errors\": 0,"), 10u);
  EXPECT_NE(json.find("\"transport\": \"fake\""), std::string::npos);
  EXPECT_NE(json.find("\"library\": \"fake 1\""), std::string::npos);
  const std::string csv = read_file(options.csv_path);
  EXPECT_EQ(count_of(csv, "\n"), 11u);
  EXPECT_EQ(csv.rfind(csv_header(), 0), 0u);
  std::remove(options.json_path.c_str());
  std::remove(options.csv_path.c_str());
}

TEST_F(Driver, CorruptedResultsAreCountedAndFailTheRun) {
  options.check = true;
  options.json_path = dir + "bench_driver_corrupt.json";
  options.dtype = Dtype::float64;
  fake.corrupt_every_call = 3;
  EXPECT_EQ(run_benchmark(options, fake, settings), 1);
  // 8 .. 4096 bytes of float64: 1, 2, 4, ... 512 elements; 3 wrong where there are 3.
  const std::string json = read_file(options.json_path);
  EXPECT_NE(json.find("\"bytes\": 8, \"count\": 1,"), std::string::npos);
  EXPECT_EQ(count_of(json, "\"errors\": 1,"), 1u) << json;
  EXPECT_EQ(count_of(json, "\"errors\": 2,"), 1u) << json;
  EXPECT_EQ(count_of(json, "\"errors\": 3,"), 8u) << json;
  EXPECT_NE(err.text().find("--check: 27 wrong elements"), std::string::npos) << err.text();
  std::remove(options.json_path.c_str());
}

TEST_F(Driver, CorruptedBroadcastIsCounted) {
  options.collective = Collective::broadcast;
  options.check = true;
  options.min_bytes = options.max_bytes = 1024;
  fake.corrupt_every_call = 5;
  EXPECT_EQ(run_benchmark(options, fake, settings), 1);
  EXPECT_NE(err.text().find("--check: 5 wrong elements"), std::string::npos) << err.text();
}

TEST_F(Driver, EveryOtherCollectiveIsCheckedAndItsCorruptionCounted) {
  for (Collective c : {Collective::reduce, Collective::allgather, Collective::allgatherv,
                       Collective::reduce_scatter, Collective::alltoall, Collective::alltoallv,
                       Collective::gather, Collective::scatter}) {
    options.collective = c;
    options.check = true;
    options.min_bytes = options.max_bytes = 1024;
    fake.corrupt_every_call = 0;
    EXPECT_EQ(run_benchmark(options, fake, settings), 0) << name(c) << ": " << err.text();
    fake.corrupt_every_call = 4;
    Capture fresh;
    settings.err = fresh.file();
    EXPECT_EQ(run_benchmark(options, fake, settings), 1) << name(c);
    EXPECT_NE(fresh.text().find("--check: 4 wrong elements"), std::string::npos)
        << name(c) << ": " << fresh.text();
    settings.err = err.file();
  }
}

TEST_F(Driver, WithoutCheckNothingIsCounted) {
  fake.corrupt_every_call = 3;
  EXPECT_EQ(run_benchmark(options, fake, settings), 0);
  EXPECT_EQ(fake.data_calls, 10 * (1 + 3));
}

TEST_F(Driver, BarrierHasOneRowOfZeroBytes) {
  options.collective = Collective::barrier;
  options.check = true;
  EXPECT_EQ(run_benchmark(options, fake, settings), 0);
  const std::string table = out.text();
  EXPECT_EQ(count_of(table, "\n"), 4u) << table;
  EXPECT_NE(table.find("fake0"), std::string::npos);
  // osu: 1 warm-up + 3 timed barriers, each preceded by an untimed one.
  EXPECT_EQ(fake.barriers, 8);
}

TEST_F(Driver, RootOutOfRangeIsAUsageError) {
  options.collective = Collective::broadcast;
  options.root = 1;
  EXPECT_EQ(run_benchmark(options, fake, settings), 2);
  EXPECT_NE(err.text().find("--root '1': out of range for 1 rank"), std::string::npos)
      << err.text();
  EXPECT_EQ(fake.data_calls, 0);
}

TEST_F(Driver, UnwritableOutputIsAUsageError) {
  options.json_path = dir + "no/such/dir/out.json";
  EXPECT_EQ(run_benchmark(options, fake, settings), 2);
  EXPECT_NE(err.text().find("--json '" + options.json_path + "': cannot open for writing"),
            std::string::npos)
      << err.text();
  EXPECT_EQ(fake.data_calls, 0);
}

TEST_F(Driver, ProgressLinesOnLongSweeps) {
  settings.progress_after_s = 0;
  EXPECT_EQ(run_benchmark(options, fake, settings), 0);
  const std::string e = err.text();
  EXPECT_NE(e.find("braid-bench: 8 bytes (1/10)"), std::string::npos) << e;
  EXPECT_NE(e.find("braid-bench: 4096 bytes (10/10)"), std::string::npos) << e;
}

}  // namespace
}  // namespace braid_bench
