#include "base/cr_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
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

/* The temp files being written (cr_file_pending_add): a short list, as a
 * process writes one or two files at a time. */
static struct {
    pthread_mutex_t lock;
    char **names;
    int n, cap;
} pending = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

int cr_file_pending_add(const char *tmp) {
    char *copy = strdup(tmp);
    if (!copy) return -1;
    pthread_mutex_lock(&pending.lock);
    if (pending.n == pending.cap) {
        int cap = pending.cap ? 2 * pending.cap : 8;
        char **grown = realloc(pending.names, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&pending.lock);
            free(copy);
            return -1;
        }
        pending.names = grown, pending.cap = cap;
    }
    pending.names[pending.n++] = copy;
    pthread_mutex_unlock(&pending.lock);
    return 0;
}

void cr_file_pending_drop(const char *tmp) {
    pthread_mutex_lock(&pending.lock);
    for (int i = pending.n - 1; i >= 0; i--) {
        if (strcmp(pending.names[i], tmp) != 0) continue;
        free(pending.names[i]);
        pending.names[i] = pending.names[--pending.n];
        break;
    }
    pthread_mutex_unlock(&pending.lock);
}

void cr_file_remove_pending(void) {
    pthread_mutex_lock(&pending.lock);
    for (int i = 0; i < pending.n; i++) unlink(pending.names[i]); /* the names stay: the process is ending */
    pthread_mutex_unlock(&pending.lock);
}

int cr_file_append_whole(const char *path, const void *buf, size_t len, cr_err *e) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        int er = errno;
        cr_errf(e, "%s: cannot open: %s", path, strerror(er));
        errno = er;
        return -1;
    }
    struct stat st;
    off_t before = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
    const char *p = buf;
    size_t done = 0;
    int er = 0;
    while (done < len && !er) {
        ssize_t n = write(fd, p + done, len - done);
        if (n > 0) done += (size_t)n;
        else if (n == 0) er = EIO;
        else if (errno != EINTR) er = errno;
    }
    if (!er) {
        close(fd);
        return 0;
    }
    /* a regular file goes back to its last whole record; a device has no size to restore */
    if (before >= 0 && ftruncate(fd, before) != 0) {
        /* nothing better to do than report the write error */
    }
    close(fd);
    cr_errf(e, "%s: cannot write: %s", path, strerror(er));
    errno = er;
    return -1;
}
