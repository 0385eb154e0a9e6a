/* A plugin from a newer braid: it exports only ABI v9, which this braid does not know. */
#include <braid/transport.h>

struct braid_transport_v9 {
  const char *name;
  int future_field;
};

__attribute__((visibility("default")))
const struct braid_transport_v9 braid_transport_v9 = {"future", 9};
