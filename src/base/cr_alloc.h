#ifndef CR_ALLOC_H
#define CR_ALLOC_H
/* Allocation that cannot return NULL: out of memory is not an input error a
 * caller could recover from, so these print one line and abort. Use plain
 * malloc where a size comes from user input and failure must be reported. */

#include <stddef.h>

void *cr_xmalloc(size_t n);
void *cr_xcalloc(size_t count, size_t size);
void *cr_xrealloc(void *p, size_t n);
char *cr_xstrdup(const char *s);

#endif
