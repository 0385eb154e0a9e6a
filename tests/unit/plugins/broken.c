/* Calls a function no library defines, so dlopen(RTLD_NOW) fails with an "undefined symbol"
 * error naming it. Linked with -z undefs (see CMakeLists.txt). */
#include <braid/transport.h>

extern int braid_test_plugin_missing_symbol(void);

static int broken_probe(char *why, size_t why_len) {
  (void)why;
  (void)why_len;
  return braid_test_plugin_missing_symbol();
}

__attribute__((visibility("default"))) const braid_transport_v1_t braid_transport_v1 = {
    .name = "broken",
    .probe = broken_probe,
};
