// Datatypes of any shape in braid's data movement: a side whose type map is contiguous moves
// in place; any other is packed by MPI into scratch before the call or unpacked after it.
//
// Why not leave such calls to MPI, as the library first did: MPI requires only the type
// signatures to match between ranks, not the shapes. Ranks that build their types with the same
// code from their own indices get a contiguous type on some ranks and not on others; those
// ranks went to braid and the others to MPI, and each waited for the other until BRAID_TIMEOUT.
// With packing every rank takes the call whatever its own datatype. It relies on MPI_Pack
// writing the type map's bytes one after the other (so a packed side and a contiguous side of
// the same signature are the same bytes), which start() checks once (pack_is_raw).
#include <climits>
#include <cstring>
#include <vector>

#include "interpose.hpp"

namespace braid::mpi {
namespace {

bool g_pack_is_raw = false;

// Per-thread scratch of at least `bytes` for side `slot` (0 send, 1 receive).
char *scratch(int slot, size_t bytes) {
  thread_local std::vector<char> room[2];
  room[slot].resize(std::max<size_t>(bytes, 1));
  return room[slot].data();
}

// A side of `count` elements: its bytes, and whether its type map lies contiguous (it moves
// in place; else it is packed). False for a negative count, an invalid type, or a type that
// would need packing where MPI does not pack plain bytes.
bool measure(MPI_Datatype type, long long count, size_t *bytes, bool *contiguous) {
  size_t size = 0;
  *contiguous = count >= 0 && contiguous_bytes(type, 1, &size);
  if (*contiguous) {
    *bytes = size * static_cast<size_t>(count);
    return true;
  }
  return pack_is_raw() && type_bytes(type, count, bytes);
}

// Packs (or unpacks) `count` elements at `user` from (to) `packed`, in pieces MPI's int
// positions can address.
bool move(void *user, long long count, MPI_Datatype type, char *packed, bool pack, MPI_Comm comm) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS)
    return false;
  if (size == 0 || count == 0) return true;
  const int per_piece = INT_MAX / size;
  if (per_piece == 0) return false;
  for (long long at = 0; at < count; at += per_piece) {
    const int n = static_cast<int>(std::min<long long>(per_piece, count - at));
    char *elem = static_cast<char *>(user) + static_cast<MPI_Aint>(at) * extent;
    char *bytes = packed + static_cast<size_t>(at) * static_cast<size_t>(size);
    int position = 0;
    const int rc = pack ? PMPI_Pack(elem, n, type, bytes, n * size, &position, comm)
                        : PMPI_Unpack(bytes, n * size, &position, elem, n, type, comm);
    if (rc != MPI_SUCCESS || position != n * size) return false;
  }
  return true;
}

}  // namespace

bool pack_is_raw() {
  return g_pack_is_raw;
}

void check_pack_format() {
  // Every other int of four: a strided type whose packed bytes must be 10 and 30 as they lie.
  MPI_Datatype strided;
  if (PMPI_Type_vector(2, 1, 2, MPI_INT, &strided) != MPI_SUCCESS) return;
  PMPI_Type_commit(&strided);
  int in[4] = {10, 20, 30, 40}, want[2] = {10, 30};
  char out[sizeof want];
  g_pack_is_raw =
      move(in, 1, strided, out, true, MPI_COMM_SELF) && std::memcmp(out, want, sizeof want) == 0;
  PMPI_Type_free(&strided);
}

bool type_bytes(MPI_Datatype type, long long count, size_t *bytes) {
  int size = 0;
  if (count < 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      size < 0)
    return false;
  *bytes = static_cast<size_t>(size) * static_cast<size_t>(count);
  return true;
}

bool SendSide::take(const void *buf, long long count, MPI_Datatype type, int slot, MPI_Comm comm) {
  bool contiguous = false;
  if (!measure(type, count, &bytes, &contiguous)) return false;
  if (contiguous) {
    data = static_cast<const char *>(buf);
    return true;
  }
  char *room = scratch(slot, bytes);
  data = room;
  return move(const_cast<void *>(buf), count, type, room, true, comm);
}

bool RecvSide::take(void *buf, long long count, MPI_Datatype type, int slot) {
  user_ = buf;
  count_ = count;
  type_ = type;
  bool contiguous = false;
  if (!measure(type, count, &bytes, &contiguous)) return false;
  packed_ = !contiguous;
  data = contiguous ? static_cast<char *>(buf) : scratch(slot, bytes);
  return true;
}

bool RecvSide::pack_part(long long first, long long count, MPI_Comm comm) {
  if (!packed_) return true;
  MPI_Aint lb = 0, extent = 0;
  int size = 0;
  if (PMPI_Type_get_extent(type_, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_size(type_, &size) != MPI_SUCCESS)
    return false;
  return move(static_cast<char *>(user_) + static_cast<MPI_Aint>(first) * extent, count, type_,
              data + static_cast<size_t>(first) * static_cast<size_t>(size), true, comm);
}

bool RecvSide::finish(MPI_Comm comm) {
  return !packed_ || move(user_, count_, type_, data, false, comm);
}

char *blocks_room(const int *counts, int n, MPI_Datatype type, int slot, size_t *cbytes,
                  size_t *dbytes) {
  int size = 0;
  if (!pack_is_raw() || PMPI_Type_size(type, &size) != MPI_SUCCESS) return nullptr;
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) return nullptr;
    cbytes[i] = static_cast<size_t>(counts[i]) * static_cast<size_t>(size);
    dbytes[i] = total;
    total += cbytes[i];
  }
  return scratch(slot, total);
}

bool pack_blocks(const void *buf, MPI_Datatype type, const int *counts, const int *displs, int n,
                 int slot, MPI_Comm comm, const char **data, size_t *cbytes, size_t *dbytes) {
  MPI_Aint lb = 0, extent = 0;
  char *room = blocks_room(counts, n, type, slot, cbytes, dbytes);
  if (room == nullptr || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) return false;
  *data = room;
  for (int i = 0; i < n; ++i)
    if (counts[i] > 0 && !move(const_cast<char *>(static_cast<const char *>(buf)) +
                                   static_cast<MPI_Aint>(displs[i]) * extent,
                               counts[i], type, room + dbytes[i], true, comm))
      return false;
  return true;
}

bool unpack_blocks(const char *data, void *buf, MPI_Datatype type, const int *counts,
                   const int *displs, const size_t *dbytes, int n, MPI_Comm comm) {
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) return false;
  for (int i = 0; i < n; ++i)
    if (counts[i] > 0 && !move(static_cast<char *>(buf) + static_cast<MPI_Aint>(displs[i]) * extent,
                               counts[i], type, const_cast<char *>(data) + dbytes[i], false, comm))
      return false;
  return true;
}

}  // namespace braid::mpi
