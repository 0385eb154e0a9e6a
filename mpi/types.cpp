// Which MPI datatypes and ops braid handles: the predefined integer and floating types with
// the predefined arithmetic, bitwise and logical ops for reductions; any type whose type map
// is contiguous without gaps, as bytes, for data movement.
#include <climits>
#include <utility>

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
      // bytes, DOUBLE PRECISION 8).
      {MPI_INTEGER, BRAID_INT32},
      {MPI_REAL, BRAID_FLOAT32},
      {MPI_DOUBLE_PRECISION, BRAID_FLOAT64},
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

bool contiguous_bytes(MPI_Datatype type, int count, size_t *bytes) {
  if (count < 0 || type == MPI_DATATYPE_NULL) return false;
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
    return false;
  if (lb != 0 || true_lb != 0 || extent != size || true_extent != size) return false;
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
