#include "report.hpp"

#include <cmath>
#include <cstdio>

#include "text.hpp"

namespace braid_bench {
namespace {

template <typename... Args>
std::string printf_string(const char *format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  std::string s(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) std::snprintf(s.data(), s.size() + 1, format, args...);
  return s;
}

// JSON has no NaN or infinity.
std::string json_number(double v) {
  return std::isfinite(v) ? printf_string("%.9g", v) : "null";
}

std::string json_string(std::string_view s) {
  return cat('"', json_escape(s), '"');
}

std::string csv_field(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

bool has_bandwidth(const RunInfo &info) {
  return info.collective != Collective::barrier;
}

}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += printf_string("\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        else
          out += c;
    }
  }
  return out;
}

std::string format_json(const RunInfo &info, const std::vector<Row> &rows) {
  const MachineInfo &m = info.machine;
  const BuildInfo &b = info.build;
  std::string j = "{\n";
  j += cat("  \"collective\": ", json_string(name(info.collective)), ",\n");
  j += cat("  \"transport\": ", json_string(info.transport), ",\n");
  j += cat("  \"ranks\": ", info.ranks, ",\n");
  j += cat("  \"dtype\": ", json_string(info.dtype), ",\n");
  j += cat("  \"op\": ", json_string(info.op), ",\n");
  j += cat("  \"mode\": ", json_string(name(info.mode)), ",\n");
  j += cat("  \"check\": ", info.check ? "true" : "false", ",\n");
  j += cat("  \"touch\": ", info.touch ? "true" : "false", ",\n");
  j += cat("  \"program\": ", json_string(info.program), ",\n");
  j += cat("  \"machine\": {\"hostname\": ", json_string(m.hostname), ", \"nproc\": ", m.nproc,
           ", \"cpu_model\": ", json_string(m.cpu_model), "},\n");
  j += cat("  \"build\": {\"braid_version\": ", json_string(b.braid_version),
           ", \"compiler\": ", json_string(b.compiler),
           ", \"build_type\": ", json_string(b.build_type),
           ", \"library\": ", json_string(b.library), "},\n");
  j += "  \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    j += i == 0 ? "\n" : ",\n";
    j += cat("    {\"bytes\": ", r.bytes, ", \"count\": ", r.count,
             ", \"algorithm\": ", json_string(r.algorithm), ", \"avg_us\": ", json_number(r.avg_us),
             ", \"min_us\": ", json_number(r.min_us), ", \"max_us\": ", json_number(r.max_us),
             ", \"algbw_gbps\": ", json_number(r.algbw_gbps),
             ", \"busbw_gbps\": ", json_number(r.busbw_gbps), ", \"errors\": ", r.errors,
             ", \"iters\": ", r.iters, ", \"warmup\": ", r.warmup, "}");
  }
  j += rows.empty() ? "]\n" : "\n  ]\n";
  j += "}\n";
  return j;
}

std::string csv_header() {
  return "bytes,count,algorithm,avg_us,min_us,max_us,algbw_gbps,busbw_gbps,errors,iters,warmup";
}

std::string format_csv_row(const Row &r) {
  return cat(printf_string("%zu,%zu,", r.bytes, r.count), csv_field(r.algorithm),
             printf_string(",%.9g,%.9g,%.9g,%.9g,%.9g,%llu,%d,%d", r.avg_us, r.min_us, r.max_us,
                           r.algbw_gbps, r.busbw_gbps, static_cast<unsigned long long>(r.errors),
                           r.iters, r.warmup));
}

std::string format_csv(const std::vector<Row> &rows) {
  std::string out = cat(csv_header(), "\n");
  for (const Row &r : rows) out += cat(format_csv_row(r), "\n");
  return out;
}

std::string table_header(const RunInfo &info) {
  std::string h = cat("# ", info.program, " ", name(info.collective), ": ", info.ranks,
                      info.ranks == 1 ? " rank" : " ranks", ", transport ", info.transport);
  if (info.dtype != "-") h += cat(", dtype ", info.dtype);
  if (info.op != "-") h += cat(", op ", info.op);
  h += cat(", mode ", name(info.mode), ", check ", info.check ? "on" : "off",
           info.touch ? ", send buffers rewritten before every call" : "", "\n");
  h += cat("# ", info.machine.hostname, ": ", info.machine.nproc, " x ", info.machine.cpu_model,
           "; ", info.build.library, "; built with ", info.build.compiler, ", ",
           info.build.build_type, "\n");
  h += printf_string("#%11s %12s  %-26s %11s %11s %11s %11s %11s %7s\n", "bytes", "count",
                     "algorithm", "avg_us", "min_us", "max_us", "algbw_GB/s", "busbw_GB/s",
                     "errors");
  return h;
}

std::string format_table_row(const RunInfo &info, const Row &r) {
  std::string line = printf_string("%12zu %12zu  %-26s %11.2f %11.2f %11.2f", r.bytes, r.count,
                                   r.algorithm.c_str(), r.avg_us, r.min_us, r.max_us);
  if (has_bandwidth(info))
    line += printf_string(" %11.3f %11.3f", r.algbw_gbps, r.busbw_gbps);
  else
    line += printf_string(" %11s %11s", "-", "-");
  if (info.check && info.collective != Collective::barrier)
    line += printf_string(" %7llu", static_cast<unsigned long long>(r.errors));
  else
    line += printf_string(" %7s", "-");
  line += '\n';
  return line;
}

}  // namespace braid_bench
