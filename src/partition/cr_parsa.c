/* parsa: in progress. */
#include "partition/cr_partition.h"

int cr_part_parsa(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_placement *out, cr_err *e) {
    (void)g, (void)k, (void)o, (void)out;
    return cr_errf(e, "partition method 'parsa' is not built yet");
}
