/*
 * route.h — the router's copy of the catalog, read without locks.
 *
 * The current catalog sits behind an RCU pointer (liburcu, bulletproof
 * flavour, so HTTP threads need no registration). A request brackets its
 * use with route_read_lock/route_read_unlock and may keep pointers into
 * the catalog only until it unlocks. route_refresh fetches the catalog from
 * the catalog node, publishes it and frees the old one after a grace
 * period (call_rcu): it never waits for readers, but it must not be called
 * inside a read-side section (it makes a blocking network call).
 */
#ifndef KV_ROUTE_H
#define KV_ROUTE_H

#include "catalog.h"
#include "err.h"
#include "router.h"

/*
 * route_open starts the background refresher (once a second) after a first
 * fetch attempt. A router whose catalog node is down starts with an empty
 * catalog and keeps trying. Returns KV_OK or KV_ENOMEM.
 */
kv_err route_open(router *r);

/* route_close stops the refresher and frees the snapshot. */
void route_close(router *r);

void route_read_lock(void);
void route_read_unlock(void);

/*
 * route_current returns the current catalog (never NULL), valid until
 * route_read_unlock. Needs route_read_lock.
 */
const catalog *route_current(router *r);

/*
 * route_refresh fetches the catalog and publishes it if it is newer.
 * Concurrent callers share one fetch. Returns KV_OK, or the error of the
 * call to the catalog node. Must not be called under route_read_lock.
 */
kv_err route_refresh(router *r);

/*
 * route_stale is what a request does after a node answered STALE_ROUTE on
 * its attempt number `attempt` (0, 1, ...): refresh the catalog, then back
 * off a little longer each time, so that the owner can hear of the change
 * too. Must not be called under route_read_lock.
 */
void route_stale(router *r, int attempt);

#endif
