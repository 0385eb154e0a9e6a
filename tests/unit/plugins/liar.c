/* Exports ABI v1 under the file name libbraid-transport-liar.so but calls itself "ucx". */
#include <braid/transport.h>

static int liar_probe(char *why, size_t why_len) {
  (void)why;
  (void)why_len;
  return 1;
}

__attribute__((visibility("default"))) const braid_transport_v1_t braid_transport_v1 = {
    .name = "ucx",
    .probe = liar_probe,
};
