/* Loads fine and has the right name, but its probe says it cannot run here. */
#include <braid/transport.h>
#include <stdio.h>

static int unusable_probe(char *why, size_t why_len) {
  if (why != NULL && why_len > 0) snprintf(why, why_len, "no device here");
  return 0;
}

__attribute__((visibility("default"))) const braid_transport_v1_t braid_transport_v1 = {
    .name = "unusable",
    .probe = unusable_probe,
};
