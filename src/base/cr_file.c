#include "base/cr_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m) {
    if (S_ISLNK(m)) return "symbolic link";
    if (S_ISCHR(m)) return "character device";
    if (S_ISBLK(m)) return "block device";
    if (S_ISFIFO(m)) return "fifo";
    if (S_ISSOCK(m)) return "socket";
    if (S_ISDIR(m)) return "directory";
    return "unknown file type";
}

/* lstat PATH: 1 if it exists and is a regular file, 0 if it does not exist,
 * -1 (e set) for anything else. */
static int probe(const char *path, cr_err *e) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return cr_errf(e, "%s: cannot check: %s", path, strerror(errno));
    }
    if (S_ISREG(st.st_mode)) return 1;
    return cr_errf(e, "%s: not a regular file (%s); refusing to replace it", path, kind(st.st_mode));
}

int cr_file_check_replace(const char *path, cr_err *e) { return probe(path, e) < 0 ? -1 : 0; }

int cr_file_create_tmp(const char *tmp, int mode, cr_err *e) {
    int p = probe(tmp, e);
    if (p < 0) return -1;
    /* a leftover: unlinking drops only this name, never a hard link's other names */
    if (p == 1 && unlink(tmp) != 0 && errno != ENOENT)
        return cr_errf(e, "%s: cannot create: %s", tmp, strerror(errno));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        int er = errno;
        cr_errf(e, "%s: cannot create: %s", tmp, strerror(er));
        errno = er; /* for callers that word the message themselves */
    }
    return fd;
}
