// Which MPI datatypes and ops braid handles: the predefined integer and floating types with
// the predefined arithmetic, bitwise and logical ops for reductions; any type whose type map
// visits contiguous bytes without gaps, once each and in order, as bytes, for data movement.
#include <climits>
#include <utility>
#include <vector>

#include "interpose.hpp"

namespace braid::mpi {
namespace {

template <class T>
constexpr braid_dtype_t integer_dtype() {
  constexpr bool is_signed = static_cast<T>(-1) < static_cast<T>(0);
  switch (sizeof(T)) {
    case 1:
      return is_signed ? BRAID_INT8 : BRAID_UINT8;
    case 2:
      return is_signed ? BRAID_INT16 : BRAID_UINT16;
    case 4:
      return is_signed ? BRAID_INT32 : BRAID_UINT32;
    default:
      return is_signed ? BRAID_INT64 : BRAID_UINT64;
  }
}

struct TypeEntry {
  MPI_Datatype type;
  braid_dtype_t dtype;
  // For Fortran's default kinds, the size braid's dtype has: theirs is the MPI's build choice.
  int default_kind_bytes = 0;
};

// Built at load time: in Open MPI the handles are addresses of library objects.
const TypeEntry *types(size_t *n) {
  static const TypeEntry table[] = {
      {MPI_INT, integer_dtype<int>()},
      {MPI_DOUBLE, BRAID_FLOAT64},
      {MPI_FLOAT, BRAID_FLOAT32},
      {MPI_LONG, integer_dtype<long>()},
      {MPI_LONG_LONG, integer_dtype<long long>()},
      {MPI_LONG_LONG_INT, integer_dtype<long long>()},
      {MPI_UNSIGNED, integer_dtype<unsigned>()},
      {MPI_UNSIGNED_LONG, integer_dtype<unsigned long>()},
      {MPI_UNSIGNED_LONG_LONG, integer_dtype<unsigned long long>()},
      {MPI_SHORT, integer_dtype<short>()},
      {MPI_UNSIGNED_SHORT, integer_dtype<unsigned short>()},
      {MPI_CHAR, integer_dtype<char>()},
      {MPI_SIGNED_CHAR, BRAID_INT8},
      {MPI_UNSIGNED_CHAR, BRAID_UINT8},
      {MPI_INT8_T, BRAID_INT8},
      {MPI_INT16_T, BRAID_INT16},
      {MPI_INT32_T, BRAID_INT32},
      {MPI_INT64_T, BRAID_INT64},
      {MPI_UINT8_T, BRAID_UINT8},
      {MPI_UINT16_T, BRAID_UINT16},
      {MPI_UINT32_T, BRAID_UINT32},
      {MPI_UINT64_T, BRAID_UINT64},
      // Fortran's, as a Fortran program's calls pass them (gfortran: INTEGER and REAL are 4
      // bytes, DOUBLE PRECISION 8; an MPI built with -fdefault-integer-8 or -fdefault-real-8
      // has other sizes, which reduction_dtype checks).
      {MPI_INTEGER, BRAID_INT32, 4},
      {MPI_REAL, BRAID_FLOAT32, 4},
      {MPI_DOUBLE_PRECISION, BRAID_FLOAT64, 8},
      {MPI_INTEGER1, BRAID_INT8},
      {MPI_INTEGER2, BRAID_INT16},
      {MPI_INTEGER4, BRAID_INT32},
      {MPI_INTEGER8, BRAID_INT64},
      {MPI_REAL4, BRAID_FLOAT32},
      {MPI_REAL8, BRAID_FLOAT64},
      {MPI_AINT, integer_dtype<MPI_Aint>()},
      {MPI_OFFSET, integer_dtype<MPI_Offset>()},
  };
  *n = sizeof table / sizeof table[0];
  return table;
}

}  // namespace

bool reduction_dtype(MPI_Datatype type, braid_dtype_t *out) {
  size_t n = 0;
  const TypeEntry *t = types(&n);
  for (size_t i = 0; i < n; ++i)
    if (t[i].type == type) {
      // The same MPI on every rank: every rank decides alike.
      int size = 0;
      if (t[i].default_kind_bytes != 0 &&
          (PMPI_Type_size(type, &size) != MPI_SUCCESS || size != t[i].default_kind_bytes))
        return false;
      *out = t[i].dtype;
      return true;
    }
  // C's bool is one byte holding 0 or 1: braid's logical ops on uint8 give MPI's answers.
  if (type == MPI_C_BOOL && sizeof(bool) == 1) {
    *out = BRAID_UINT8;
    return true;
  }
  return false;
}

bool reduction_op(MPI_Op op, braid_op_t *out) {
  static const std::pair<MPI_Op, braid_op_t> ops[] = {
      {MPI_SUM, BRAID_SUM},   {MPI_PROD, BRAID_PROD}, {MPI_MIN, BRAID_MIN},
      {MPI_MAX, BRAID_MAX},   {MPI_BAND, BRAID_BAND}, {MPI_BOR, BRAID_BOR},
      {MPI_BXOR, BRAID_BXOR}, {MPI_LAND, BRAID_LAND}, {MPI_LOR, BRAID_LOR},
      {MPI_LXOR, BRAID_LXOR},
  };
  for (const auto &[mpi, braid] : ops)
    if (mpi == op) {
      *out = braid;
      return true;
    }
  return false;
}

namespace {

// A type whose bytes lie from 0 to its size without gaps (lb 0, extent and true extent its
// size). Its type map may still visit them out of order, or one twice.
bool packed(MPI_Datatype type, MPI_Aint *size_out) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
    return false;
  *size_out = size;
  return lb == 0 && true_lb == 0 && extent == size && true_extent == size;
}

// Whether `type`'s type map visits its bytes once each, in address order, from its start (so
// that MPI's packed form of it is the bytes as they lie): from its constructor, by
// MPI_Type_get_envelope/contents. An indexed type with displacements {1, 0} is packed but
// reversed, and one with {0, 0, 2} is packed on the send side but reads an element twice:
// moved as bytes they gave other answers than MPI's. Constructors not known here (subarray,
// darray, ...) count as out of order: MPI then moves those calls.
bool in_order(MPI_Datatype type, int depth) {
  int ni = 0, na = 0, nt = 0, combiner = 0;
  if (depth > 16 || PMPI_Type_get_envelope(type, &ni, &na, &nt, &combiner) != MPI_SUCCESS)
    return false;
  // Predefined, and so are MPI_Type_create_f90_*'s (never freed).
  if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
      combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER)
    return true;
  std::vector<int> ints(static_cast<size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<size_t>(nt));
  if (PMPI_Type_get_contents(type, ni, na, nt, ints.data(), addrs.data(), types.data()) !=
      MPI_SUCCESS)
    return false;
  // Every part must itself be packed and in order; `sizes` holds their sizes in bytes.
  std::vector<MPI_Aint> sizes(types.size());
  bool ok = true;
  for (size_t i = 0; i < types.size(); ++i)
    ok = ok && packed(types[i], &sizes[i]) && in_order(types[i], depth + 1);
  // Blocks of `len` elements of `elem` bytes at byte offsets `at`, in this order, must follow
  // each other from 0.
  MPI_Aint next = 0;
  auto block = [&next](MPI_Aint at, MPI_Aint len, MPI_Aint elem) {
    if (len == 0) return true;
    if (len < 0 || at != next) return false;
    next += len * elem;
    return true;
  };
  if (ok) switch (combiner) {
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_CONTIGUOUS:
        break;
      case MPI_COMBINER_VECTOR:  // count, blocklength, stride (in elements)
        ok = ints[0] <= 1 || ints[1] == ints[2];
        break;
      case MPI_COMBINER_HVECTOR:  // count, blocklength; stride (bytes)
        ok = ints[0] <= 1 || addrs[0] == ints[1] * sizes[0];
        break;
      case MPI_COMBINER_INDEXED:  // count, blocklengths[count], displacements[count] (elements)
        for (int i = 0; ok && i < ints[0]; ++i)
          ok = block(ints[1 + ints[0] + i] * sizes[0], ints[1 + i], sizes[0]);
        break;
      case MPI_COMBINER_HINDEXED:  // count, blocklengths[count]; displacements (bytes)
        for (int i = 0; ok && i < ints[0]; ++i) ok = block(addrs[i], ints[1 + i], sizes[0]);
        break;
      case MPI_COMBINER_INDEXED_BLOCK:  // count, blocklength, displacements[count] (elements)
        for (int i = 0; ok && i < ints[0]; ++i)
          ok = block(ints[2 + i] * sizes[0], ints[1], sizes[0]);
        break;
      case MPI_COMBINER_HINDEXED_BLOCK:  // count, blocklength; displacements (bytes)
        for (int i = 0; ok && i < ints[0]; ++i) ok = block(addrs[i], ints[1], sizes[0]);
        break;
      case MPI_COMBINER_STRUCT:  // count, blocklengths[count]; displacements; types
        for (int i = 0; ok && i < ints[0]; ++i) ok = block(addrs[i], ints[1 + i], sizes[i]);
        break;
      case MPI_COMBINER_RESIZED:  // lb, extent; the type resized
        ok = addrs[0] == 0 && addrs[1] == sizes[0];
        break;
      case MPI_COMBINER_SUBARRAY:
      case MPI_COMBINER_DARRAY:
        // Their extent is the whole array's: packed (checked by the caller), they are all of
        // it, in the order it lies (a column of a matrix is not packed).
        break;
      default:
        ok = false;
    }
  // get_contents hands out new handles for the parts that are not predefined (f90 types are
  // predefined too: freeing one is an error).
  for (MPI_Datatype &t : types) {
    int ti = 0, ta = 0, tt = 0, tc = 0;
    if (PMPI_Type_get_envelope(t, &ti, &ta, &tt, &tc) == MPI_SUCCESS && tc != MPI_COMBINER_NAMED &&
        tc != MPI_COMBINER_F90_REAL && tc != MPI_COMBINER_F90_COMPLEX &&
        tc != MPI_COMBINER_F90_INTEGER)
      PMPI_Type_free(&t);
  }
  return ok;
}

}  // namespace

bool contiguous_bytes(MPI_Datatype type, int count, size_t *bytes) {
  if (count < 0 || type == MPI_DATATYPE_NULL) return false;
  MPI_Aint size = 0;
  if (!packed(type, &size) || !in_order(type, 0)) return false;
  *bytes = static_cast<size_t>(size) * static_cast<size_t>(count);
  return true;
}

bool extent_of(MPI_Datatype type, size_t *extent) {
  MPI_Aint lb = 0, ext = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
      lb != 0 || ext < 0)
    return false;
  *extent = static_cast<size_t>(ext);
  return true;
}

}  // namespace braid::mpi
