#include "data/cr_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_file.h"

int cr_out_open(cr_out *o, const char *path, cr_err *e) {
    memset(o, 0, sizeof *o);
    if (cr_file_check_replace(path, e) != 0) return -1;
    size_t n = strlen(path) + 16;
    o->tmp = cr_xmalloc(n);
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", path); /* unique per call: threads may race */
    int fd = mkstemp(o->tmp);
    if (fd >= 0) fchmod(fd, 0644);
    o->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
        cr_errf(e, "%s: cannot create: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    o->path = cr_xstrdup(path);
    o->buf = cr_xmalloc(1u << 20);
    setvbuf(o->f, o->buf, _IOFBF, 1u << 20);
    return 0;
}

static void release(cr_out *o) {
    free(o->path);
    free(o->tmp);
    free(o->buf);
    memset(o, 0, sizeof *o);
}

int cr_out_commit(cr_out *o, cr_err *e) {
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int err = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    o->f = NULL;
    if (!bad && cr_file_check_replace(o->path, e) != 0) {
        unlink(o->tmp);
        release(o);
        return -1;
    }
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        cr_errf(e, "%s: write failed: %s", o->path, strerror(err));
        unlink(o->tmp);
        release(o);
        return -1;
    }
    release(o);
    return 0;
}

void cr_out_abort(cr_out *o) {
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    release(o);
}
