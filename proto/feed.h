/*
 * feed.h — the catalog feed: the catalog node publishes every change of
 * the catalog on an nng PUB socket, and every router and node subscribes,
 * so that a change reaches the whole cluster in milliseconds instead of at
 * the next poll.
 *
 * A change carries the catalog's new version, the version it applies to,
 * the tables it added or changed (whole) and the ids of those it removed.
 * Between changes the publisher sends a heartbeat with the current version
 * every FEED_HEARTBEAT_MS. A subscriber applies a change whose `prev` is
 * the version it holds; anything else that is newer — a change after a
 * missed one, a heartbeat ahead of it, a first connection or a reconnect —
 * is a gap, and it fetches the whole catalog instead (through the caller's
 * fetch function, the frames call CATALOG_GET). PUB/SUB may drop messages
 * (a slow subscriber, a broken connection); the sequence makes every loss
 * a gap, and the heartbeat bounds how long a loss can go unnoticed. A
 * subscriber that hears nothing for FEED_SILENCE_MS fetches on its own,
 * every FEED_SILENCE_MS while the silence lasts: the slow safety net.
 *
 * Where next: node/catalog/catalog_node.c publishes, router/route.c and
 * node/main.c subscribe.
 */
#ifndef KV_FEED_H
#define KV_FEED_H

#include <stdint.h>

#include "arena.h"
#include "catalog.h"
#include "err.h"
#include "wire_cluster.h"

#define FEED_HEARTBEAT_MS 500
#define FEED_SILENCE_MS 3000

typedef struct feed_pub feed_pub;
typedef struct feed_sub feed_sub;

/*
 * feed_pub_open listens on url and starts the heartbeat at version
 * `version`. Returns KV_OK with an owned publisher in *out (free with
 * feed_pub_close()), KV_IO when url cannot be bound, KV_EINVAL, KV_ENOMEM.
 */
kv_err feed_pub_open(const char *url, uint64_t version, feed_pub **out);

/*
 * feed_pub_change publishes the change from old to cur (both borrowed;
 * cur->version is the new version, old->version the one it follows).
 * Callers publish changes in version order (the catalog node holds its
 * catalog lock). Returns KV_OK (also when the change was dropped by a
 * fault, or no one listens) or KV_ENOMEM. Thread-safe.
 */
kv_err feed_pub_change(feed_pub *p, const catalog *old, const catalog *cur);

/*
 * Faults, for tests and chaos experiments. feed_pub_drop: the next n
 * changes are not sent (subscribers see a gap). feed_pub_disconnect:
 * closes the listener and every subscriber's connection (the socket
 * stays: bus_listen_pause) and listens again after ms; changes and
 * heartbeats meanwhile reach nobody. Returns once it listens again (said
 * on stderr, with the time it took): KV_OK, or the error of listening
 * again (an address still taken is tried again for up to 2 s; the
 * publisher then stays without connections).
 */
void feed_pub_drop(feed_pub *p, uint32_t n);
/* The most a disconnect takes beyond its ms: the listener guard's probe
 * under way, up to 2 s, before each of closing and listening again, and
 * listening again while the address is still taken, up to 2 s. */
#define FEED_DISCONNECT_EXTRA_MS 6000
kv_err feed_pub_disconnect(feed_pub *p, uint32_t ms);

/* feed_pub_close stops the heartbeat and closes; accepts NULL. */
void feed_pub_close(feed_pub *p);

/*
 * A subscriber's hooks; both run on the subscriber's thread.
 * fetch: the whole current catalog, owned by the caller (catalog_free),
 *   or an error (the subscriber tries again a little later).
 * install: takes c (owned; may be older than what the caller holds, when
 *   the caller fetched meanwhile), published_us the Unix time the change
 *   was published, or 0 when c was fetched. May be NULL.
 */
typedef kv_err (*feed_fetch_fn)(void *arg, catalog **out);
typedef void (*feed_install_fn)(void *arg, catalog *c, int64_t published_us);

/*
 * feed_sub_open dials url (again and again until it connects) and starts
 * the subscriber's thread, whose first act is a fetch. Returns KV_OK with
 * an owned subscriber (free with feed_sub_close()), KV_EINVAL for a URL
 * nng cannot dial, or KV_ENOMEM.
 */
kv_err feed_sub_open(const char *url, feed_fetch_fn fetch,
    feed_install_fn install, void *arg, feed_sub **out);

/* feed_sub_close stops the thread and frees; accepts NULL. */
void feed_sub_close(feed_sub *s);

/* Buckets of the propagation histogram: FEED_LAG_BOUNDS_US, then above. */
#define FEED_LAG_BUCKETS 12
#define FEED_LAG_BOUNDS_US { 250, 500, 1000, 2000, 5000, 10000, 20000, \
	50000, 100000, 250000, 500000, 1000000 }
/* How many recent changes a subscriber remembers (feed_sub_arrivals). */
#define FEED_ARRIVALS 1024

typedef struct feed_counts {
	uint64_t version; /* of the catalog the subscriber holds; 0: none */
	uint64_t changes; /* changes applied from the feed */
	uint64_t fetches; /* whole catalogs fetched */
	uint64_t gaps;    /* gaps seen (each led to a fetch) */
	/*
	 * Propagation: for each change applied from the feed, the time
	 * from its publication (the catalog node's clock) to the end of
	 * install (this process's clock): counts per bucket, not
	 * cumulative; their number and sum in seconds.
	 */
	uint64_t lag_counts[FEED_LAG_BUCKETS + 1];
	uint64_t lag_samples;
	double lag_sum_s;
} feed_counts;

/*
 * Tests: closes s's dialer, as if nng had stopped dialing (bus.h's
 * bus_dialer); the subscriber replaces it. Its thread closes it, between
 * receives; returns once it has.
 */
void feed_sub_plant_dead_dialer(feed_sub *s);

/* feed_sub_counts reads s's counters. Thread-safe. */
void feed_sub_counts(feed_sub *s, feed_counts *out);

/*
 * feed_sub_arrivals returns, oldest first, the last FEED_ARRIVALS changes
 * s applied from the feed (version, published, applied), in an array
 * allocated from a (valid until arena_fini). KV_OK or KV_ENOMEM.
 */
kv_err feed_sub_arrivals(feed_sub *s, arena *a, feed_arrival **out,
    size_t *n);

/*
 * feed_sub_copy returns in *out an owned copy of the catalog s holds
 * (catalog_free), or NULL when it holds none yet. KV_OK or KV_ENOMEM.
 */
kv_err feed_sub_copy(feed_sub *s, catalog **out);

#endif
