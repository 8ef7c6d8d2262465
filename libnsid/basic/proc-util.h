/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small fd and /proc helpers shared by the library's modules. Internal. */
#ifndef NSID_PROC_UTIL_H
#define NSID_PROC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Read fd to EOF into a NUL-terminated malloc'ed buffer of at most max bytes; -EFBIG if the
 * file has more. Works for files whose st_size is 0 (procfs, sysfs). EAGAIN (an O_NONBLOCK
 * FIFO or socket with nothing to read) is returned as -EAGAIN. read_fd_deadline() without a
 * deadline. */
int read_fd_capped(int fd, size_t max, char **ret_data, size_t *ret_size);

/* openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | extra_flags), then the
 * file must be a regular one (-ENXIO otherwise: a FIFO, a device); its stat in ret_st.
 * Returns the fd or a negative errno. */
int open_regular_at(int dfd, const char *path, int extra_flags, struct stat *ret_st);

/* Now on CLOCK_MONOTONIC, in milliseconds (vDSO: no system call). */
uint64_t now_monotonic_ms(void);

#define READ_NO_DEADLINE UINT64_MAX

/* poll(2) fd for events until deadline_ms: 1 when ready, 0 when woken up early (EINTR; call
 * again), -ETIMEDOUT once the deadline has passed, or another negative errno. */
int fd_wait_deadline(int fd, short events, uint64_t deadline_ms);

/* Read fd (a pipe, socket or file; blocking or not) until EOF, or with stop_at_newline
 * until the first '\n', all before deadline_ms (now_monotonic_ms() clock): -ETIMEDOUT.
 * Each read waits in poll(POLLIN) first; EAGAIN and EINTR wait again. READ_NO_DEADLINE: plain
 * reads, no poll, EAGAIN returned as -EAGAIN. At most max bytes:
 * more is -EFBIG (with stop_at_newline: max bytes without a '\n'). The data (up to and with
 * the '\n' when one was asked for and read; bytes after it are dropped) is NUL-terminated
 * in buf (max + 1 bytes, the caller's) if buf is not NULL, else in a malloc'ed buffer grown
 * as data arrives and returned in *ret_data (free() it). ret_data and ret_size may be NULL. */
int read_fd_deadline(int fd, size_t max, uint64_t deadline_ms, bool stop_at_newline, char *buf,
                     char **ret_data, size_t *ret_size);

/* 0 while the process of pidfd runs, -ESRCH once it has exited (zombie or reaped; poll,
 * since a signal would still reach an unreaped zombie), -EBADF or -errno. */
int pidfd_check_alive(int pidfd);

/* The pid a pidfd refers to, from /proc/self/fdinfo ("Pid:" line); -ESRCH if it exited. */
int pidfd_get_pid(int pidfd, pid_t *ret);

/* Field 22 of /proc/PID/stat (or /proc/PID/task/TID/stat), the task's start time in clock
 * ticks since boot, from len bytes of that file's text. The second field, the command name
 * in parentheses, is chosen by the process and may hold blanks and ')': fields are counted
 * from the last ')'. -EINVAL when the text is not of that form. */
int proc_stat_parse_starttime(const char *text, size_t len, uint64_t *ret);

/* The "Tgid:" line of /proc/PID/status (the thread group, i.e. the process, of task PID),
 * from len bytes of that file's text (the command name on its first line is escaped by the
 * kernel, so no line can be forged). -EINVAL when there is none or it is malformed. */
int proc_status_parse_tgid(const char *text, size_t len, pid_t *ret);

#endif
