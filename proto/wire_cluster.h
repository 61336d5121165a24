/*
 * wire_cluster.h — the messages of the cluster's nng traffic as our own
 * structs, and their packing: catalog events (feed.h), survey questions
 * and answers (survey.h), and the node-to-node envelope (peer.h). As in
 * wire.h, nothing outside proto/ sees protobuf-c, and corrupt bytes give
 * KV_PROTO, never a crash.
 */
#ifndef KV_WIRE_CLUSTER_H
#define KV_WIRE_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "catalog.h"
#include "err.h"
#include "wire.h"

typedef enum catalog_event_kind {
	CATALOG_EVENT_CHANGE = 1,    /* version follows prev: apply the change */
	CATALOG_EVENT_HEARTBEAT = 2, /* version is current; nothing changed */
} catalog_event_kind;

/* A catalog change or heartbeat, as the catalog node publishes it. */
typedef struct catalog_event {
	catalog_event_kind kind;
	uint64_t version;     /* the catalog's version after the change */
	uint64_t prev;        /* CHANGE: the version it applies to */
	int64_t published_us; /* Unix time of publishing */
	table *upserts;       /* tables added or changed (owned) */
	size_t n_upserts;
	uint32_t *gone;       /* ids of tables removed (owned) */
	size_t n_gone;
	uint32_t next_table_id;
} catalog_event;

/*
 * wire_pack_catalog_event returns owned bytes (free()) for e (borrowed).
 * KV_OK or KV_ENOMEM.
 */
kv_err wire_pack_catalog_event(const catalog_event *e, uint8_t **out,
    size_t *len);

/*
 * wire_unpack_catalog_event fills *e, which then owns its tables and ids
 * (wire_catalog_event_fini). KV_OK, KV_PROTO (with *e zeroed) or
 * KV_ENOMEM.
 */
kv_err wire_unpack_catalog_event(const uint8_t *buf, size_t len,
    catalog_event *e);

/* wire_catalog_event_fini frees what e owns; safe on zeroed. */
void wire_catalog_event_fini(catalog_event *e);

typedef enum member_kind {
	MEMBER_NODE = 1,
	MEMBER_ROUTER = 2,
} member_kind;

/* What a survey asks members to include in their answer. */
#define SURVEY_STATS 1u    /* a node's per-partition counters */
#define SURVEY_ARRIVALS 2u /* the recent changes from the catalog feed */

/* When a change from the catalog feed arrived (feed.h). */
typedef struct feed_arrival {
	uint64_t version;
	int64_t published_us; /* Unix time, on the catalog node's clock */
	int64_t applied_us;   /* Unix time, on the member's clock */
} feed_arrival;

/* A member's answer to a survey. */
typedef struct member {
	member_kind kind;
	uint32_t index;           /* its line among the file's nodes/routers */
	int64_t pid;
	int64_t started_ms;       /* Unix time it started */
	uint64_t catalog_version; /* the catalog version it holds */
	part_stats *stats;        /* a node's partitions, when asked */
	size_t n_stats;
	uint64_t requests;        /* a router's answered requests */
	uint32_t connections;     /* a router's open client connections */
	const char *addr;         /* node URL, router HTTP address */
	uint64_t feed_changes;    /* catalog changes applied from the feed */
	uint64_t feed_fetches;    /* whole catalogs fetched */
	uint64_t feed_gaps;       /* gaps in the feed's sequence */
	feed_arrival *arrivals;   /* SURVEY_ARRIVALS, oldest first */
	size_t n_arrivals;
} member;

/* wire_pack_member: owned bytes for m (borrowed). KV_OK or KV_ENOMEM. */
kv_err wire_pack_member(const member *m, uint8_t **out, size_t *len);

/*
 * wire_unpack_member fills *m; its pointers are valid until arena_fini(a).
 * KV_OK, KV_PROTO or KV_ENOMEM.
 */
kv_err wire_unpack_member(const uint8_t *buf, size_t len, arena *a,
    member *m);

/* A survey's question: SURVEY_* bits. */
kv_err wire_pack_survey_ask(uint32_t what, uint8_t **out, size_t *len);
kv_err wire_unpack_survey_ask(const uint8_t *buf, size_t len,
    uint32_t *what);

/* A message on the node-to-node seam (peer.h), and its reply. */
typedef struct peer_msg {
	uint32_t type; /* peer_type */
	uint32_t from; /* the sender's node index */
	const uint8_t *body;
	size_t len;
} peer_msg;

typedef struct peer_reply {
	kv_err code;
	const char *message; /* NULL or a reason */
	const uint8_t *body;
	size_t len;
} peer_reply;

/*
 * Packing borrows; unpacking points into a (valid until arena_fini(a)).
 * KV_OK, KV_PROTO (unpacking) or KV_ENOMEM.
 */
kv_err wire_pack_peer_msg(const peer_msg *m, uint8_t **out, size_t *len);
kv_err wire_unpack_peer_msg(const uint8_t *buf, size_t len, arena *a,
    peer_msg *m);
kv_err wire_pack_peer_reply(const peer_reply *r, uint8_t **out,
    size_t *len);
kv_err wire_unpack_peer_reply(const uint8_t *buf, size_t len, arena *a,
    peer_reply *r);

#endif
