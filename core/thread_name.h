/*
 * thread_name.h — gives the calling thread a name that top -H, ps -L and
 * /proc/PID/task/TID/comm show. Without one, a thread inherits its
 * creator's name, and a thread started from one of nng's callbacks shows
 * as nng's, which hides where a process's CPU goes.
 */
#ifndef KV_CORE_THREAD_NAME_H
#define KV_CORE_THREAD_NAME_H

/* NAME is cut to 15 bytes, the kernel's limit. */
void thread_name(const char *name);

#endif
