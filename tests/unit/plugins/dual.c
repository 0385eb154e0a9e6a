/* Exports ABI v1 and a newer v3: the loader must take v1 (the newest it knows of the two) and
 * accept it: a v1-only plugin still loads under ABI v2. */
#include <braid/transport.h>

static int dual_probe(char *why, size_t why_len) {
  if (why != NULL && why_len > 0) why[0] = '\0';
  return 1;
}

__attribute__((visibility("default"))) const braid_transport_v1_t braid_transport_v1 = {
    .name = "dual",
    .probe = dual_probe,
};

struct braid_transport_v3 {
  const char *name;
};

__attribute__((visibility("default")))
const struct braid_transport_v3 braid_transport_v3 = {"dual"};
