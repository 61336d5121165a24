/*
 * bus_exit.c — the process-wide "about to exit" flag (see bus_exit.h).
 */
#include "bus_exit.h"

#include <stdatomic.h>

static atomic_bool exiting;

void
bus_exit_begin(void)
{
	atomic_store(&exiting, true);
}

bool
bus_exit_started(void)
{
	return atomic_load(&exiting);
}
