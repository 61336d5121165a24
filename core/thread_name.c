/*
 * thread_name.c — names the calling thread (thread_name.h), through
 * pthread_setname_np, which needs _GNU_SOURCE before any header.
 */
#define _GNU_SOURCE
#include "thread_name.h"

#include <pthread.h>
#include <string.h>

void
thread_name(const char *name)
{
	char b[16];
	size_t l = strlen(name);
	if (l > sizeof(b) - 1)
		l = sizeof(b) - 1;
	memcpy(b, name, l);
	b[l] = '\0';
	(void) pthread_setname_np(pthread_self(), b);
}
