#include "rank_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

namespace mp {
namespace {

braid_comm_t g_world = nullptr;

uint16_t to_half(float f) {  // exact for the small integers used here
  if (f == 0) return std::signbit(f) ? 0x8000 : 0;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000;
  int exp = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mant = (bits >> 13) & 0x3ff;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | mant);
}

float from_half(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0 && mant == 0) {
    float z;
    std::memcpy(&z, &sign, 4);
    return z;
  }
  uint32_t bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

braid_comm_t world() {
  return g_world;
}
int rank() {
  return braid_comm_rank(g_world);
}
int size() {
  return braid_comm_size(g_world);
}

bool identical_on_all_ranks(const void *data, size_t bytes) {
  std::vector<unsigned char> reference(static_cast<const unsigned char *>(data),
                                       static_cast<const unsigned char *>(data) + bytes);
  if (braid_broadcast(reference.data(), bytes, BRAID_UINT8, 0, g_world) != BRAID_SUCCESS)
    return false;
  int same = std::memcmp(reference.data(), data, bytes) == 0 ? 1 : 0;
  // Every rank learns whether any rank differed.
  if (braid_allreduce(&same, &same, 1, BRAID_INT32, BRAID_MIN, g_world) != BRAID_SUCCESS)
    return false;
  return same == 1;
}

bool is_integer(braid_dtype_t dt) {
  return dt != BRAID_FLOAT16 && dt != BRAID_BFLOAT16 && dt != BRAID_FLOAT32 && dt != BRAID_FLOAT64;
}

int64_t combine(braid_op_t op, int64_t a, int64_t b) {
  switch (op) {
    case BRAID_SUM:
    case BRAID_AVG:
      return a + b;
    case BRAID_PROD:
      return a * b;
    case BRAID_MIN:
      return std::min(a, b);
    case BRAID_MAX:
      return std::max(a, b);
    case BRAID_BAND:
      return a & b;
    case BRAID_BOR:
      return a | b;
    case BRAID_BXOR:
      return a ^ b;
    case BRAID_LAND:
      return (a != 0) && (b != 0);
    case BRAID_LOR:
      return (a != 0) || (b != 0);
    case BRAID_LXOR:
      return (a != 0) != (b != 0);
    default:  // the range enumerators and invalid values
      break;
  }
  return 0;
}

int64_t alone(braid_op_t op, int64_t v) {
  return op == BRAID_LAND || op == BRAID_LOR || op == BRAID_LXOR ? int64_t{v != 0} : v;
}

int64_t input_value(braid_dtype_t dt, braid_op_t op, int r, size_t i) {
  const bool is_unsigned =
      dt == BRAID_UINT8 || dt == BRAID_UINT16 || dt == BRAID_UINT32 || dt == BRAID_UINT64;
  const uint64_t h =
      (static_cast<uint64_t>(r) * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull);
  const uint64_t mix = (h ^ (h >> 29)) * 0x94d049bb133111ebull;
  const uint64_t k = mix >> 40;
  switch (op) {
    case BRAID_SUM:  // |sum| <= 3 * ranks: exact everywhere
      return is_unsigned ? static_cast<int64_t>(k % 4) : static_cast<int64_t>(k % 7) - 3;
    case BRAID_PROD:  // mostly 1, some 2 and -1: |product| <= 2^ranks
      if (k % 8 == 0) return 2;
      if (!is_unsigned && k % 8 == 1) return -1;
      return 1;
    case BRAID_AVG:
      // 16-bit floats: multiples of the rank count, so the average is an exact small integer;
      // others: small values whose sum cannot overflow even int8 (the division truncates).
      if (dt == BRAID_FLOAT16 || dt == BRAID_BFLOAT16)
        return (static_cast<int64_t>(k % 5) - 2) * size();
      return is_unsigned ? static_cast<int64_t>(k % 16) : static_cast<int64_t>(k % 17) - 8;
    case BRAID_LAND:  // mostly non-zero, so that AND is not always 0
      return k % 5 == 0 ? 0 : static_cast<int64_t>(k % 7) + 1;
    case BRAID_LOR:
    case BRAID_LXOR:  // mostly zero, so that OR is not always 1
      return k % 4 == 0 ? static_cast<int64_t>(k % 3) + 1 : 0;
    case BRAID_BAND:
    case BRAID_BOR:
    case BRAID_BXOR:  // bits of a byte, signed values too
      return is_unsigned ? static_cast<int64_t>(k % 256) : static_cast<int64_t>(k % 256) - 128;
    default:  // min/max: anything exact
      return is_unsigned ? static_cast<int64_t>(k % 100) : static_cast<int64_t>(k % 200) - 100;
  }
}

void store(braid_dtype_t dt, void *buf, size_t i, int64_t v) {
  switch (dt) {
    case BRAID_INT8:
      static_cast<int8_t *>(buf)[i] = static_cast<int8_t>(v);
      break;
    case BRAID_UINT8:
      static_cast<uint8_t *>(buf)[i] = static_cast<uint8_t>(v);
      break;
    case BRAID_INT16:
      static_cast<int16_t *>(buf)[i] = static_cast<int16_t>(v);
      break;
    case BRAID_UINT16:
      static_cast<uint16_t *>(buf)[i] = static_cast<uint16_t>(v);
      break;
    case BRAID_INT32:
      static_cast<int32_t *>(buf)[i] = static_cast<int32_t>(v);
      break;
    case BRAID_UINT32:
      static_cast<uint32_t *>(buf)[i] = static_cast<uint32_t>(v);
      break;
    case BRAID_INT64:
      static_cast<int64_t *>(buf)[i] = v;
      break;
    case BRAID_UINT64:
      static_cast<uint64_t *>(buf)[i] = static_cast<uint64_t>(v);
      break;
    case BRAID_FLOAT16:
      static_cast<uint16_t *>(buf)[i] = to_half(static_cast<float>(v));
      break;
    case BRAID_BFLOAT16: {
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      static_cast<uint16_t *>(buf)[i] = static_cast<uint16_t>(bits >> 16);
      break;
    }
    case BRAID_FLOAT32:
      static_cast<float *>(buf)[i] = static_cast<float>(v);
      break;
    case BRAID_FLOAT64:
      static_cast<double *>(buf)[i] = static_cast<double>(v);
      break;
    default:  // the range enumerators and invalid values
      break;
  }
}

double load(braid_dtype_t dt, const void *buf, size_t i) {
  switch (dt) {
    case BRAID_INT8:
      return static_cast<const int8_t *>(buf)[i];
    case BRAID_UINT8:
      return static_cast<const uint8_t *>(buf)[i];
    case BRAID_INT16:
      return static_cast<const int16_t *>(buf)[i];
    case BRAID_UINT16:
      return static_cast<const uint16_t *>(buf)[i];
    case BRAID_INT32:
      return static_cast<const int32_t *>(buf)[i];
    case BRAID_UINT32:
      return static_cast<const uint32_t *>(buf)[i];
    case BRAID_INT64:
      return static_cast<double>(static_cast<const int64_t *>(buf)[i]);
    case BRAID_UINT64:
      return static_cast<double>(static_cast<const uint64_t *>(buf)[i]);
    case BRAID_FLOAT16:
      return from_half(static_cast<const uint16_t *>(buf)[i]);
    case BRAID_BFLOAT16: {
      uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t *>(buf)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case BRAID_FLOAT32:
      return static_cast<const float *>(buf)[i];
    case BRAID_FLOAT64:
      return static_cast<const double *>(buf)[i];
    default:  // the range enumerators and invalid values
      break;
  }
  return 0;
}

size_t elem_size(braid_dtype_t dt) {
  switch (dt) {
    case BRAID_INT8:
    case BRAID_UINT8:
      return 1;
    case BRAID_INT16:
    case BRAID_UINT16:
    case BRAID_FLOAT16:
    case BRAID_BFLOAT16:
      return 2;
    case BRAID_INT32:
    case BRAID_UINT32:
    case BRAID_FLOAT32:
      return 4;
    default:
      return 8;
  }
}

const char *dtype_str(braid_dtype_t dt) {
  static const char *names[] = {"int8",    "uint8",    "int32",   "uint32",  "int64", "uint64",
                                "float16", "bfloat16", "float32", "float64", "int16", "uint16"};
  return names[dt];
}

const char *op_str(braid_op_t op) {
  static const char *names[] = {"sum", "prod", "min",  "max", "avg", "band",
                                "bor", "bxor", "land", "lor", "lxor"};
  return names[op];
}

namespace {

bool env_empty(const char *name) {
  const char *v = std::getenv(name);
  return v == nullptr || *v == '\0';
}

// This host as braid identifies it (hostname and boot id), hashed: ranks on other hosts (e.g.
// braidrun's 2-host launch tests in network namespaces) differ.
uint64_t host_hash() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string id = name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string line;
  if (std::getline(boot, line)) id += line;
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

bool all_on_one_host() {
  uint64_t lo = host_hash(), hi = lo;
  EXPECT_EQ(braid_allreduce(&lo, &lo, 1, BRAID_UINT64, BRAID_MIN, world()), BRAID_SUCCESS);
  EXPECT_EQ(braid_allreduce(&hi, &hi, 1, BRAID_UINT64, BRAID_MAX, world()), BRAID_SUCCESS);
  return lo == hi;
}

bool shm_selected(const char *algo_var) {
  const char *intranode = std::getenv("BRAID_INTRANODE");
  return size() > 1 && (intranode == nullptr || std::string(intranode) != "off") &&
         env_empty("BRAID_HOST_ID") && env_empty(algo_var) && all_on_one_host();
}

}  // namespace mp

namespace {
// On ranks other than 0 only failures are printed, naming the rank, so the log reads like one
// run yet no rank's failure goes unseen.
class FailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult &r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", mp::rank(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }
};
}  // namespace

// One world per process, shared by every test.
int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (braid_init(&argc, &argv, &mp::g_world) != BRAID_SUCCESS) {
    std::fprintf(stderr, "braid_init failed: %s\n", braid_last_error());
    return 1;
  }
  if (mp::rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter);
  }
  int rc = RUN_ALL_TESTS();
  // A rank whose tests failed makes the job fail even if the others passed.
  if (braid_finalize() != BRAID_SUCCESS) rc = 1;
  return rc;
}
