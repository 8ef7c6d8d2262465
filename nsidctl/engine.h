/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsidctl: which container engine runs a process, and the container's name, from the
 * cgroup the engine put it in (engine.c). No json-c, no libnsid: unit-tested on its own. */
#ifndef NSIDCTL_ENGINE_H
#define NSIDCTL_ENGINE_H

#include <stddef.h>
#include <sys/types.h>

#define ENGINE_ID_MAX 64
#define ENGINE_NAME_MAX 255

typedef struct engine_ref {
        const char *engine;              /* "podman", "docker", "cri-o", "lxc", "nspawn" */
        char id[ENGINE_ID_MAX + 1];      /* the engine's container id; "" if it names by name */
        char name[ENGINE_NAME_MAX + 1];  /* the container's name; "" if the cgroup lacks it */
} engine_ref;

/* The engine and container of a cgroup v2 path (the "0::" line of /proc/PID/cgroup), from
 * the cgroup names the engines give their containers:
 *   podman    libpod-<64 hex>[.scope]  (cgroupfs: /libpod_parent/..., systemd: machine.slice,
 *                                       rootless: the user's slice)
 *   docker    docker-<64 hex>.scope, or /docker/<64 hex>
 *   cri-o     crio-<64 hex>.scope
 *   lxc       lxc.payload.<name> (LXC 4+), or /lxc/<name>
 *   nspawn    machine-<name>.scope (systemd-escaped: \x2d is "-")
 * The outermost matching component wins: below it the container may create cgroups of any
 * name (a delegated subtree), above it only the host can. Engine monitors (conmon's
 * libpod-conmon-<id>, lxc.monitor.<name>) are not containers. Returns 0, or -ENOENT when no
 * component matches, -EINVAL for a NULL or relative path. */
int engine_from_cgroup(const char *cgroup, engine_ref *ret);

/* The name Podman's conmon was started with ("-n NAME" / "--name NAME" / "--name=NAME") in a
 * NUL-separated argv as /proc/PID/cmdline gives it. 0 and the name in buf, -ENOENT if it
 * has none, -ENAMETOOLONG. */
int engine_conmon_name(const char *cmdline, size_t size, char *buf, size_t bufsize);

/* For a podman container whose cgroup gave no name: its first process's parent is conmon
 * (comm "conmon", and its "-u" is this container's id); its "-n" is the name. Reads
 * /proc/PID/stat and /proc/PPID/{comm,cmdline} under proc_root ("/proc"). 0 when ref->name
 * was filled. */
int engine_name_podman(const char *proc_root, pid_t pid, engine_ref *ref);

/* The name systemd-nspawn gives its container from a NUL-separated argv: "-M NAME" /
 * "--machine[=]NAME", else the last component of "-D DIR" / "--directory[=]DIR". 0 and the
 * name in buf, -ENOENT if it has neither, -ENAMETOOLONG. */
int engine_nspawn_name(const char *cmdline, size_t size, char *buf, size_t bufsize);

/* For a process no engine's cgroup names: a container systemd-nspawn runs without
 * registering it (--register=no, or no systemd-machined): its first process's parent is
 * systemd-nspawn (comm), running as root or as the caller. Reads /proc/PID/stat and
 * /proc/PPID/{comm,cmdline} under proc_root. 0 and *ret (engine "nspawn", the name when its
 * command line gives one), -ENOENT if the parent is not that, -ESRCH if pid is gone. */
int engine_from_nspawn_parent(const char *proc_root, pid_t pid, engine_ref *ret);

#endif
