/* Exports ABI v1 and v2 (as a plugin built for both would): the loader must take v2. */
#include <braid/transport.h>

static int both_probe(char *why, size_t why_len) {
  if (why != NULL && why_len > 0) why[0] = '\0';
  return 1;
}

__attribute__((visibility("default"))) const braid_transport_v1_t braid_transport_v1 = {
    .name = "both",
    .probe = both_probe,
};

__attribute__((visibility("default"))) const braid_transport_v2_t braid_transport_v2 = {
    .name = "both",
    .probe = both_probe,
};
