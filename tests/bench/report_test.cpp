// The output formats: JSON keys and shape (checked with a small JSON reader), CSV header and
// rows, and the table's columns.
#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "report.hpp"

namespace braid_bench {
namespace {

// A minimal JSON reader, enough to check that the output parses and has the right keys.
struct Json {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  double num = 0;
  bool b = false;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
};

class Reader {
 public:
  explicit Reader(const std::string &text) : s_(text) {}
  bool parse(Json *out) {
    if (!value(out)) return false;
    ws();
    return pos_ == s_.size();
  }

 private:
  void ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool lit(const char *word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  bool str(std::string *out) {
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    ++pos_;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (pos_ >= s_.size()) return false;
        char e = s_[pos_++];
        if (e == 'u') {
          if (pos_ + 4 > s_.size()) return false;
          c = static_cast<char>(std::stoi(s_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
        } else {
          c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        }
      }
      out->push_back(c);
    }
    if (pos_ >= s_.size()) return false;
    ++pos_;
    return true;
  }
  bool value(Json *out) {
    ws();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') {
      out->kind = Json::object;
      ++pos_;
      ws();
      if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, true;
      for (;;) {
        ws();
        std::string key;
        if (!str(&key)) return false;
        ws();
        if (pos_ >= s_.size() || s_[pos_++] != ':') return false;
        if (out->fields.count(key)) return false;  // duplicate key
        if (!value(&out->fields[key])) return false;
        ws();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return pos_ < s_.size() && s_[pos_++] == '}';
      }
    }
    if (c == '[') {
      out->kind = Json::array;
      ++pos_;
      ws();
      if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, true;
      for (;;) {
        out->items.emplace_back();
        if (!value(&out->items.back())) return false;
        ws();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        return pos_ < s_.size() && s_[pos_++] == ']';
      }
    }
    if (c == '"') {
      out->kind = Json::string;
      return str(&out->str);
    }
    if (lit("true")) return out->kind = Json::boolean, out->b = true, true;
    if (lit("false")) return out->kind = Json::boolean, true;
    if (lit("null")) return out->kind = Json::null, true;
    size_t used = 0;
    try {
      out->num = std::stod(s_.substr(pos_), &used);
    } catch (...) {
      return false;
    }
    if (used == 0) return false;
    pos_ += used;
    out->kind = Json::number;
    return true;
  }
  const std::string &s_;
  size_t pos_ = 0;
};

RunInfo sample_info(Collective c = Collective::allreduce) {
  RunInfo info;
  info.program = "braid-bench";
  info.collective = c;
  info.transport = "ucx";
  info.ranks = 4;
  info.dtype = "float32";
  info.op = "sum";
  info.mode = Mode::osu;
  info.check = true;
  info.machine = {"node\"1", 2, "AMD EPYC\t7763"};
  info.build = {"0.1.0", "g++ 12.2.0", "Release", "braid 0.1.0"};
  return info;
}

std::vector<Row> sample_rows() {
  Row a;
  a.bytes = 8;
  a.count = 2;
  a.algorithm = "auto(recursive_doubling)";
  a.avg_us = 3.5;
  a.min_us = 3.25;
  a.max_us = 3.75;
  a.algbw_gbps = 8 / 3.5e-6 / 1e9;
  a.busbw_gbps = a.algbw_gbps * 1.5;
  a.errors = 0;
  a.iters = 1000;
  a.warmup = 100;
  Row b = a;
  b.bytes = 64u << 20;
  b.count = 16u << 20;
  b.algorithm = "ring";
  b.avg_us = 20000;
  b.errors = 3;
  b.iters = 11;
  b.warmup = 2;
  return {a, b};
}

TEST(Report, JsonEscape) {
  EXPECT_EQ(json_escape("plain"), "plain");
  EXPECT_EQ(json_escape("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(json_escape("x\ny\tz"), "x\\ny\\tz");
  EXPECT_EQ(json_escape(std::string("\x01", 1)), "\\u0001");
}

TEST(Report, JsonParsesWithEveryKey) {
  const std::string text = format_json(sample_info(), sample_rows());
  Json j;
  ASSERT_TRUE(Reader(text).parse(&j)) << text;
  ASSERT_EQ(j.kind, Json::object);
  for (const char *key : {"collective", "transport", "ranks", "dtype", "op", "mode", "check",
                          "program", "machine", "build", "rows"})
    EXPECT_TRUE(j.fields.count(key)) << key;
  EXPECT_EQ(j.fields["collective"].str, "allreduce");
  EXPECT_EQ(j.fields["transport"].str, "ucx");
  EXPECT_EQ(j.fields["ranks"].num, 4);
  EXPECT_EQ(j.fields["mode"].str, "osu");
  EXPECT_TRUE(j.fields["check"].b);

  Json &m = j.fields["machine"];
  ASSERT_EQ(m.kind, Json::object);
  EXPECT_EQ(m.fields["hostname"].str, "node\"1");
  EXPECT_EQ(m.fields["nproc"].num, 2);
  EXPECT_EQ(m.fields["cpu_model"].str, "AMD EPYC\t7763");
  Json &b = j.fields["build"];
  for (const char *key : {"braid_version", "compiler", "build_type", "library"})
    EXPECT_EQ(b.fields[key].kind, Json::string) << key;

  Json &rows = j.fields["rows"];
  ASSERT_EQ(rows.kind, Json::array);
  ASSERT_EQ(rows.items.size(), 2u);
  for (Json &r : rows.items) {
    ASSERT_EQ(r.kind, Json::object);
    for (const char *key : {"bytes", "count", "avg_us", "min_us", "max_us", "algbw_gbps",
                            "busbw_gbps", "errors", "iters", "warmup"})
      EXPECT_EQ(r.fields[key].kind, Json::number) << key;
    EXPECT_EQ(r.fields["algorithm"].kind, Json::string);
  }
  EXPECT_EQ(rows.items[0].fields["algorithm"].str, "auto(recursive_doubling)");
  EXPECT_EQ(rows.items[1].fields["bytes"].num, 64.0 * 1024 * 1024);
  EXPECT_EQ(rows.items[1].fields["errors"].num, 3);
  EXPECT_DOUBLE_EQ(rows.items[0].fields["avg_us"].num, 3.5);
  EXPECT_NEAR(rows.items[0].fields["busbw_gbps"].num, 8 / 3.5e-6 / 1e9 * 1.5, 1e-9);
}

TEST(Report, JsonWithoutRowsAndNonFiniteNumbers) {
  Json j;
  ASSERT_TRUE(Reader(format_json(sample_info(), {})).parse(&j));
  EXPECT_TRUE(j.fields["rows"].items.empty());

  std::vector<Row> rows = sample_rows();
  rows[0].avg_us = std::numeric_limits<double>::infinity();
  rows[0].min_us = std::numeric_limits<double>::quiet_NaN();
  Json k;
  const std::string text = format_json(sample_info(), rows);
  ASSERT_TRUE(Reader(text).parse(&k)) << text;
  EXPECT_EQ(k.fields["rows"].items[0].fields["avg_us"].kind, Json::null);
  EXPECT_EQ(k.fields["rows"].items[0].fields["min_us"].kind, Json::null);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

TEST(Report, CsvHeaderAndRows) {
  EXPECT_EQ(csv_header(),
            "bytes,count,algorithm,avg_us,min_us,max_us,algbw_gbps,busbw_gbps,errors,iters,warmup");
  const std::vector<std::string> lines = split(format_csv(sample_rows()), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], csv_header());
  for (const std::string &line : lines) EXPECT_EQ(split(line, ',').size(), 11u) << line;
  const std::vector<std::string> first = split(lines[1], ',');
  EXPECT_EQ(first[0], "8");
  EXPECT_EQ(first[1], "2");
  EXPECT_EQ(first[2], "auto(recursive_doubling)");
  EXPECT_EQ(first[3], "3.5");
  EXPECT_EQ(first[8], "0");
  EXPECT_EQ(first[9], "1000");
  const std::vector<std::string> second = split(lines[2], ',');
  EXPECT_EQ(second[0], "67108864");
  EXPECT_EQ(second[8], "3");

  Row odd = sample_rows()[0];
  odd.algorithm = "a,\"b\"";
  EXPECT_NE(format_csv_row(odd).find(",\"a,\"\"b\"\"\","), std::string::npos);
}

TEST(Report, TableColumns) {
  const RunInfo info = sample_info();
  const std::string header = table_header(info);
  for (const char *word : {"braid-bench allreduce: 4 ranks", "transport ucx", "dtype float32",
                           "op sum", "mode osu", "check on", "bytes", "count", "algorithm",
                           "avg_us", "min_us", "max_us", "algbw_GB/s", "busbw_GB/s", "errors"})
    EXPECT_NE(header.find(word), std::string::npos) << word;
  const std::vector<Row> rows = sample_rows();
  const std::string line = format_table_row(info, rows[1]);
  EXPECT_NE(line.find("67108864"), std::string::npos);
  EXPECT_NE(line.find("ring"), std::string::npos);
  EXPECT_NE(line.find("20000.00"), std::string::npos);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(split(line, ' ').back(), "3\n");

  RunInfo unchecked = info;
  unchecked.check = false;
  EXPECT_EQ(split(format_table_row(unchecked, rows[1]), ' ').back(), "-\n");
}

TEST(Report, BarrierRowPrintsLatencyOnly) {
  RunInfo info = sample_info(Collective::barrier);
  info.dtype = "-";
  info.op = "-";
  Row r;
  r.algorithm = "auto(dissemination)";
  r.avg_us = 2.5;
  const std::string line = format_table_row(info, r);
  std::vector<std::string> fields;
  for (const std::string &f : split(line.substr(0, line.size() - 1), ' '))
    if (!f.empty()) fields.push_back(f);
  ASSERT_EQ(fields.size(), 9u) << line;
  EXPECT_EQ(fields[0], "0");
  EXPECT_EQ(fields[3], "2.50");
  EXPECT_EQ(fields[6], "-");
  EXPECT_EQ(fields[7], "-");
  EXPECT_EQ(fields[8], "-");
  EXPECT_EQ(table_header(info).find("dtype"), std::string::npos);
}

}  // namespace
}  // namespace braid_bench
