/* Method name -> function table, one place for the CLI and the bindings. */
#include <string.h>

#include "partition/cr_mbp.h"
#include "partition/cr_partition.h"

static const struct {
    const char *name;
    cr_part_fn fn;
} methods[] = {
    {"random", cr_part_random}, {"parsa", cr_part_parsa}, {"tsh1", cr_part_tsh1}, {"tsh2", cr_part_tsh2},
    {"mbp", cr_part_mbp},       {"dppa", cr_part_dppa},   {"metis", cr_part_metis},
    {"mbp-grow", cr_part_mbp_grow}, /* MBP with a greedy-growing initial partition */
};

cr_part_fn cr_part_method(const char *name, int *available) {
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        if (strcmp(name, methods[i].name) != 0) continue;
        if (available) *available = methods[i].fn == cr_part_metis ? cr_metis_available() : 1;
        return methods[i].fn;
    }
    if (available) *available = 0;
    return NULL;
}

const char *cr_part_method_name(size_t i) {
    return i < sizeof methods / sizeof methods[0] ? methods[i].name : NULL;
}
