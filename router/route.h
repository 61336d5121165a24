/*
 * route.h — the router's copy of the catalog, read without locks, kept
 * current by the catalog feed (proto/feed.h: every change is pushed to
 * every router as it happens) and by fetches on demand.
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
#include "feed.h"
#include "router.h"
#include "wire_cluster.h"

/* How the router's catalog has been kept current (route_feed_counts). */
typedef struct route_counts {
	uint64_t feed_changes;   /* changes applied from the feed */
	uint64_t feed_fetches;   /* whole catalogs the feed fetched (gaps) */
	uint64_t feed_gaps;
	uint64_t demand_fetches; /* route_refresh calls that fetched */
	/*
	 * Time from a change's publication to this router holding it:
	 * counts per bucket of FEED_LAG_BOUNDS_US (feed.h), not
	 * cumulative; their number and sum.
	 */
	uint64_t lag_counts[FEED_LAG_BUCKETS + 1];
	uint64_t lag_samples;
	double lag_sum_s;
} route_counts;

/*
 * route_open makes a first fetch attempt and subscribes to the catalog
 * feed on node 0's bus address. A router whose catalog node is down
 * starts with an empty catalog; the feed keeps trying. Returns KV_OK,
 * KV_EINVAL (no feed address) or KV_ENOMEM.
 */
kv_err route_open(router *r);

/* route_close leaves the feed and frees the snapshot. */
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

/*
 * How many times a request is sent again after STALE_ROUTE answers. With
 * route_stale's back-off (5 ms more each time, at most 50 ms) that is
 * about two seconds: longer than a partition move keeps writes fenced,
 * so a move costs clients latency, not an error.
 */
#define ROUTE_STALE_RETRIES 40

/* route_version: the version of the current snapshot. */
uint64_t route_version(router *r);

/* route_feed_counts reads the counters above. Thread-safe. */
void route_feed_counts(route_counts *out);

/*
 * route_feed_arrivals: the recent changes this router applied from the
 * feed (feed_sub_arrivals), for survey answers. KV_OK or KV_ENOMEM.
 */
kv_err route_feed_arrivals(arena *a, feed_arrival **out, size_t *n);

#endif
