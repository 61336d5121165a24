/*
 * thread_name.h — gives the calling thread a name that top -H, ps -L and
 * /proc/PID/task/TID/comm show. Without one, a thread shows the name of
 * the thread that started it, so that most of a process's threads look
 * alike and where its CPU goes cannot be told.
 */
#ifndef KV_CORE_THREAD_NAME_H
#define KV_CORE_THREAD_NAME_H

/* NAME is cut to 15 bytes, the kernel's limit. */
void thread_name(const char *name);

#endif
