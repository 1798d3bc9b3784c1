#ifndef CR_FILE_H
#define CR_FILE_H
/* Safe replacement of files written as "temp file, then rename over PATH".
 *
 * rename(2) replaces whatever sits at PATH: a device node, a fifo, a socket
 * or a symbolic link becomes a regular file, and the caller reports success.
 * Every writer that replaces a file the user named checks the target first
 * with cr_file_check_replace, and creates its temp file with
 * cr_file_create_tmp, which never writes through an existing name. */

#include <stddef.h>

#include "base/cr_err.h"

/* May PATH be replaced by a new regular file? 0 if PATH does not exist or is
 * a regular file. Otherwise -1 with e set to
 *   "PATH: not a regular file (KIND); refusing to replace it"
 * where KIND is "symbolic link", "character device", "block device", "fifo",
 * "socket" or "directory" (lstat: a symlink is refused whatever it points
 * to), or "PATH: cannot check: REASON" when lstat fails for another reason
 * than a missing file. Nothing is created, opened or changed. Writers call it
 * before writing anything and again just before the rename. */
int cr_file_check_replace(const char *path, cr_err *e);

/* Create TMP for writing (the temp name of a writer, e.g. "PATH.tmp") with
 * open(O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode): a symlink at TMP
 * is never followed, a hard link never written through. A regular file left
 * at TMP (a crashed earlier write) is unlinked first; anything else at TMP is
 * refused as by cr_file_check_replace. Returns the new file descriptor (the
 * caller's to close), or -1 with e set ("TMP: cannot create: REASON", errno
 * kept from open). */
int cr_file_create_tmp(const char *tmp, int mode, cr_err *e);

/* Temp files being written, for a process that ends without unwinding: a
 * lost node ends `crescent run` with _exit from the scheduler's thread while
 * the main thread may be half way through a checkpoint. A writer adds its
 * temp name once it exists and drops it once renamed or unlinked;
 * cr_file_remove_pending unlinks every name still added (the exit path
 * calls it just before _exit). The set is per process, not per object,
 * because the thread that ends the process does not know the writers.
 * Thread-safe; names are copied. cr_file_pending_add returns 0, or -1 if
 * out of memory (the file is then not removed on such an exit). */
int cr_file_pending_add(const char *tmp);
void cr_file_pending_drop(const char *tmp);
void cr_file_remove_pending(void);

/* Append the LEN bytes of BUF to PATH (created with mode 0666 if missing)
 * whole or not at all: a short or failed write (a full disk) truncates the
 * file back to its size before the call, so a line-per-record file never
 * ends in a partial record. The data are flushed to the file (no fsync).
 * Returns 0, or -1 with e set ("PATH: REASON"; errno kept). Not safe
 * against another process appending to PATH at the same time. */
int cr_file_append_whole(const char *path, const void *buf, size_t len, cr_err *e);

#endif
