/*
 * reshape.c — the catalog node's splits and moves, and their events.
 *
 * A split replaces one partition by two or more that cover its hashes,
 * with new ids, on the same owner, at the next epoch; the owner hears it
 * as an ASSIGN (the worker's resend), which creates the new partitions
 * over the items already in its store and drops the old one. Nothing is
 * copied: storage keys name the table and the hash, not the partition.
 *
 * A move (move.h for the protocol) runs on the thread that asked for it,
 * one at a time (move_serial). Before its first step it records itself
 * under the store key MOVE_KEY; the catalog change that hands the
 * partition over deletes that record in the same batch. So after a
 * crash of the catalog node a record still there means the move was not
 * handed over: reshape_recover undoes it (the partition stays with its
 * source at a higher epoch, which lifts the fence; the target forgets
 * what it copied). A source or target that fails or restarts during the
 * move makes a step fail, and the move is undone the same way.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "catalog_int.h"
#include "catalog_node.h"
#include "clock.h"
#include "cluster.h"
#include "move.h"
#include "node.h"
#include "survey.h"
#include "thread_name.h"

#define MOVE_KEY_LEN 5
static const uint8_t move_key[MOVE_KEY_LEN] = { 0, 0, 0, 0, 'M' };
#define MOVE_VAL_LEN 32

/* Drain rounds before the fence: until fewer than this many are left. */
#define DRAIN_BEFORE_FENCE 64
/*
 * The catch-up before the fence goes on while it gains on the writes:
 * it stops once fewer than DRAIN_BEFORE_FENCE keys are left, or after
 * DRAIN_STALLED rounds that did not lower the count (writes come as fast
 * as they are copied; the fence then stops them). After the fence no
 * write comes, so the last catch-up always ends; DRAIN_ROUNDS only
 * bounds a source that keeps answering nonsense.
 */
#define DRAIN_STALLED 20
#define DRAIN_ROUNDS 100000

static const char *const reason_names[5] = {
	"operator", "heat", "size", "rebalance", "hot item",
};

static const char *
reason_name(uint32_t r)
{
	return r < 5 ? reason_names[r] : "operator";
}

/* ---- events ---- */

static void
event_add_locked(catalog_state *cs, char *json)
{
	reshape_event *e = &cs->events[cs->next_seq % EVENTS_KEPT];
	free(e->json);
	e->seq = cs->next_seq++;
	e->json = json;
}

static void
iso_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t o = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + o, len - o, ".%03ldZ", ts.tv_nsec / 1000000);
}

void
reshape_fini(catalog_state *cs)
{
	for (size_t i = 0; i < EVENTS_KEPT; i++) {
		free(cs->events[i].json);
		cs->events[i].json = NULL;
	}
}

void
reshape_events(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	catalog_state *cs = n->cat;
	if (cs == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&cs->mu);
	resp->blobs = arena_alloc(a, EVENTS_KEPT * sizeof(*resp->blobs));
	resp->blob_lens = arena_alloc(a, EVENTS_KEPT *
	    sizeof(*resp->blob_lens));
	resp->code = resp->blobs == NULL || resp->blob_lens == NULL ?
	    KV_ENOMEM : KV_OK;
	uint64_t first = cs->next_seq > EVENTS_KEPT ?
	    cs->next_seq - EVENTS_KEPT : 0;
	for (uint64_t s = first; s < cs->next_seq && resp->code == KV_OK;
	    s++) {
		const reshape_event *e = &cs->events[s % EVENTS_KEPT];
		if (e->json == NULL)
			continue;
		size_t len = strlen(e->json);
		char *c = arena_dup(a, e->json, len);
		if (c == NULL) {
			resp->code = KV_ENOMEM;
			break;
		}
		resp->blobs[resp->n_blobs] = (const uint8_t *) c;
		resp->blob_lens[resp->n_blobs++] = len;
	}
	pthread_mutex_unlock(&cs->mu);
}

void
reshape_write_metrics(node *n, FILE *f)
{
	catalog_state *cs = n->cat;
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	fprintf(f, "# HELP kv_splits_total Partitions split, by "
	    "reason.\n# TYPE kv_splits_total counter\n");
	for (int r = 0; r < 5; r++)
		fprintf(f, "kv_splits_total{reason=\"%s\"} %" PRIu64
		    "\n", reason_names[r], cs->splits[r]);
	fprintf(f, "# HELP kv_capacity_borrow_rounds_total Seconds in which "
	    "a partition of a PROVISIONED table borrowed its table's unused "
	    "units.\n# TYPE kv_capacity_borrow_rounds_total counter\n"
	    "kv_capacity_borrow_rounds_total %" PRIu64 "\n", cs->lent_rounds);
	fprintf(f, "# HELP kv_moves_total Partition moves, by "
	    "reason and outcome.\n# TYPE kv_moves_total "
	    "counter\n");
	for (int r = 0; r < 5; r++) {
		fprintf(f, "kv_moves_total{reason=\"%s\","
		    "outcome=\"done\"} %" PRIu64 "\n", reason_names[r],
		    cs->moves[r]);
		fprintf(f, "kv_moves_total{reason=\"%s\","
		    "outcome=\"undone\"} %" PRIu64 "\n", reason_names[r],
		    cs->moves_failed[r]);
	}
	pthread_mutex_unlock(&cs->mu);
}

/* ---- splits ---- */

static void queue_pieces_locked(catalog_state *cs, const table *t,
    size_t at, size_t pieces, bool hot_item);

static table *
find_by_id(catalog *c, uint32_t id)
{
	for (size_t i = 0; i < c->n_tables; i++)
		if (c->tables[i].id == id)
			return &c->tables[i];
	return NULL;
}

/*
 * A new parts array for t with t->parts[at] replaced by n + 1 zeroed
 * pieces (the caller fills np[at .. at + n]), and in *next the first id
 * no partition of t has. NULL when memory runs out.
 */
static partition *
pieces(const table *t, size_t at, size_t n, uint32_t *next)
{
	partition *np = calloc(t->n_parts + n, sizeof(*np));
	if (np == NULL)
		return NULL;
	*next = 0;
	for (size_t i = 0; i < t->n_parts; i++)
		if (t->parts[i].id >= *next)
			*next = t->parts[i].id + 1;
	memcpy(np, t->parts, at * sizeof(*np));
	memcpy(np + at + n + 1, t->parts + at + 1,
	    (t->n_parts - at - 1) * sizeof(*np));
	return np;
}

/*
 * Replaces t->parts[at] by the pieces that cuts[0..n) make of it, with
 * new ids, on its owner, at the next epoch. The cuts are checked.
 */
static kv_err
split_part(table *t, size_t at, const uint64_t *cuts, size_t n_cuts)
{
	partition old = t->parts[at];
	for (size_t k = 0; k < n_cuts; k++)
		if (cuts[k] <= old.lo || cuts[k] > old.last ||
		    (k > 0 && cuts[k] <= cuts[k - 1]))
			return KV_EINVAL;
	uint32_t next;
	partition *np = pieces(t, at, n_cuts, &next);
	if (np == NULL)
		return KV_ENOMEM;
	for (size_t k = 0; k <= n_cuts; k++)
		np[at + k] = (partition) {
			.id = next++,
			.lo = k == 0 ? old.lo : cuts[k - 1],
			.last = k == n_cuts ? old.last : cuts[k] - 1,
			.node = old.node, .epoch = old.epoch + 1,
		};
	free(t->parts);
	t->parts = np;
	t->n_parts += n_cuts;
	return KV_OK;
}

static int
key_order(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c != 0 ? c : al < bl ? -1 : al > bl;
}

/*
 * Replaces t->parts[at], a partition of a single hash, by the keyed
 * partitions the key cuts kc[0..n) make of it (catalog.h), with new ids,
 * on its owner, at the next epoch. The cuts are checked: each strictly
 * inside the partition's keys, in increasing order.
 */
static kv_err
split_keyed(table *t, size_t at, const uint8_t *const *kc, const size_t *kcl,
    size_t n)
{
	partition old = t->parts[at];
	if (old.lo != old.last || n == 0)
		return KV_EINVAL;
	for (size_t k = 0; k < n; k++)
		if (kcl[k] == 0 || kcl[k] > PART_KEY_MAX ||
		    (old.kfrom_len > 0 && key_order(kc[k], kcl[k], old.kfrom,
		    old.kfrom_len) <= 0) ||
		    (old.kto_len > 0 && key_order(kc[k], kcl[k], old.kto,
		    old.kto_len) >= 0) ||
		    (k > 0 && key_order(kc[k], kcl[k], kc[k - 1],
		    kcl[k - 1]) <= 0))
			return KV_EINVAL;
	uint32_t next;
	partition *np = pieces(t, at, n, &next);
	if (np == NULL)
		return KV_ENOMEM;
	for (size_t k = 0; k <= n; k++) {
		partition *p = &np[at + k];
		*p = (partition) { .id = next++, .lo = old.lo, .last = old.last,
		    .node = old.node, .epoch = old.epoch + 1, .keyed = true };
		if (k == 0) {
			p->kfrom_len = old.kfrom_len;
			memcpy(p->kfrom, old.kfrom, old.kfrom_len);
		} else {
			p->kfrom_len = (uint8_t) kcl[k - 1];
			memcpy(p->kfrom, kc[k - 1], kcl[k - 1]);
		}
		if (k == n) {
			p->kto_len = old.kto_len;
			memcpy(p->kto, old.kto, old.kto_len);
		} else {
			p->kto_len = (uint8_t) kcl[k];
			memcpy(p->kto, kc[k], kcl[k]);
		}
	}
	free(t->parts);
	t->parts = np;
	t->n_parts += n;
	return KV_OK;
}

/* Appends "s" to a growing JSON text; false when memory runs out. */
typedef struct jbuf {
	char *s;
	size_t len, cap;
	bool failed;
} jbuf;

static void
jb_add(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>

static void
jb_add(jbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->failed = true;
			return;
		}
		if ((size_t) k < b->cap - b->len) {
			b->len += (size_t) k;
			return;
		}
		size_t cap = b->cap * 2 + (size_t) k + 64;
		char *s = realloc(b->s, cap);
		if (s == NULL) {
			b->failed = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

static void
jb_str(jbuf *b, const char *s)
{
	jb_add(b, "\"");
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			jb_add(b, "\\%c", *s);
		else if ((unsigned char) *s < 0x20)
			jb_add(b, "\\u%04x", (unsigned char) *s);
		else
			jb_add(b, "%c", *s);
	}
	jb_add(b, "\"");
}

static void
jb_head(jbuf *b, catalog_state *cs, const char *kind, uint32_t reason,
    const table *t, const partition *p)
{
	char when[40];
	iso_now(when, sizeof(when));
	jb_add(b, "{\"seq\":%" PRIu64 ",\"time\":\"%s\",\"kind\":\"%s\","
	    "\"reason\":\"%s\",\"table\":", cs->next_seq, when, kind,
	    reason_name(reason));
	jb_str(b, t->name);
	jb_add(b, ",\"part\":%u,\"lo\":\"%016" PRIx64 "\",\"last\":\"%016"
	    PRIx64 "\",\"epoch\":%" PRIu64, p->id, p->lo, p->last, p->epoch);
}

void
reshape_split(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	catalog_state *cs = n->cat;
	catalog *c = NULL;
	uint64_t mid;
	jbuf ev = { 0 };

	if (cs == NULL || (req->op == RPC_SPLIT && req->table_name == NULL)) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&cs->mu);
	if ((resp->code = catalog_clone(cs->cat, &c)) != KV_OK)
		goto out;
	table *t = req->op == RPC_SPLIT ?
	    catalog_find_mut(c, req->table_name) : find_by_id(c, req->table_id);
	if (t == NULL) {
		resp->code = KV_NO_TABLE;
		goto out;
	}
	if (t->status != TABLE_ACTIVE) {
		resp->code = KV_IN_USE;
		resp->message = "the table is not ACTIVE";
		goto out;
	}
	size_t at = t->n_parts;
	for (size_t i = 0; i < t->n_parts; i++)
		if (t->parts[i].id == req->part)
			at = i;
	if (at == t->n_parts) {
		resp->code = KV_EINVAL;
		resp->message = "no such partition";
		goto out;
	}
	partition old = t->parts[at];
	if (req->epoch != 0 && old.epoch != req->epoch) {
		resp->code = KV_STALE_ROUTE; /* it changed since the ask */
		goto out;
	}
	if (cs->moving_table == t->id) {
		/* The move hands over the table's map as it found it. */
		resp->code = KV_IN_USE;
		resp->message = "a partition of the table is being moved";
		goto out;
	}
	const uint64_t *cuts = req->cuts;
	size_t n_cuts = req->n_cuts;
	if (req->range_lo_len > 0 && table_has_local(t)) {
		/* A local index's entries live beside their collection's
		 * items, in one partition (core/keyenc.h), as DynamoDB binds
		 * such a collection to one partition. */
		resp->code = KV_EINVAL;
		resp->message = "a table with local secondary indexes does "
		    "not split on the sort key";
		goto out;
	}
	if (req->range_lo_len > 0) {
		/*
		 * On the sort key, inside one item collection: its partition
		 * serves through several (no local secondary index exists to
		 * bind a collection to one partition).
		 */
		const uint8_t *kc[2] = { req->range_lo, req->range_hi };
		size_t kcl[2] = { req->range_lo_len, req->range_hi_len };
		n_cuts = req->range_hi != NULL && req->range_hi_len > 0 ? 2 : 1;
		if ((resp->code = split_keyed(t, at, kc, kcl, n_cuts)) !=
		    KV_OK) {
			if (resp->code == KV_EINVAL)
				resp->message = "a key cut must lie inside the "
				    "keys of a partition of a single hash";
			goto out;
		}
	} else if (n_cuts == 0) {
		if (old.lo == old.last) {
			resp->code = KV_EINVAL;
			resp->message = "a partition of a single hash cannot "
			    "split";
			goto out;
		}
		mid = old.lo + (old.last - old.lo) / 2 + 1;
		cuts = &mid;
		n_cuts = 1;
	}
	if (req->range_lo_len == 0 && (resp->code = split_part(t, at, cuts,
	    n_cuts)) != KV_OK) {
		if (resp->code == KV_EINVAL)
			resp->message = "each cut must lie inside the "
			    "partition, in increasing order";
		goto out;
	}
	jb_head(&ev, cs, "split", req->reason, t, &old);
	jb_add(&ev, ",\"node\":%u,\"into\":[", old.node);
	for (size_t k = 0; k <= n_cuts; k++) {
		const partition *p = &t->parts[at + k];
		jb_add(&ev, "%s{\"part\":%u,\"lo\":\"%016" PRIx64 "\","
		    "\"last\":\"%016" PRIx64 "\"", k > 0 ? "," : "", p->id,
		    p->lo, p->last);
		if (p->keyed) {
			jb_add(&ev, ",\"key_from\":\"");
			for (size_t b = 0; b < p->kfrom_len; b++)
				jb_add(&ev, "%02x", p->kfrom[b]);
			jb_add(&ev, "\",\"key_to\":\"");
			for (size_t b = 0; b < p->kto_len; b++)
				jb_add(&ev, "%02x", p->kto[b]);
			jb_add(&ev, "\"");
		}
		jb_add(&ev, "}");
	}
	jb_add(&ev, "],\"hot_keys\":[");
	for (size_t k = 0; k < req->n_subs; k++) {
		char key[128];
		size_t l = req->sub_lens[k] < sizeof(key) - 1 ?
		    req->sub_lens[k] : sizeof(key) - 1;
		memcpy(key, req->subs[k], l);
		key[l] = '\0';
		jb_add(&ev, "%s", k > 0 ? "," : "");
		jb_str(&ev, key);
	}
	jb_add(&ev, "]}");
	if (ev.failed) {
		resp->code = KV_ENOMEM;
		goto out;
	}
	if ((resp->code = catalog_copy_out(t, resp)) != KV_OK)
		goto out;
	uint32_t id = t->id;
	if ((resp->code = catalog_publish_locked(n, c, NULL)) != KV_OK)
		goto out;
	c = NULL;
	catalog_resend_add_locked(cs, id);
	if (req->reason == RPC_REASON_HEAT || req->reason == RPC_REASON_HOT_ITEM)
		queue_pieces_locked(cs, find_by_id(cs->cat, id), at, n_cuts + 1,
		    req->reason == RPC_REASON_HOT_ITEM);
	cs->splits[req->reason < 5 ? req->reason : 0]++;
	fprintf(stderr, "kv-node %u: split: %s\n", n->index, ev.s);
	event_add_locked(cs, ev.s);
	ev.s = NULL;
out:
	pthread_mutex_unlock(&cs->mu);
	catalog_free(c);
	free(ev.s);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

/* ---- moves ---- */

/* What MOVE_KEY holds: the move under way. */
typedef struct move_rec {
	uint32_t table_id, part, from, to;
	uint64_t epoch, id;
} move_rec;

static kv_err
record_move(node *n, const move_rec *m)
{
	uint8_t v[MOVE_VAL_LEN];
	store_batch b;
	bytes_put_le32(v, m->table_id);
	bytes_put_le32(v + 4, m->part);
	bytes_put_le32(v + 8, m->from);
	bytes_put_le32(v + 12, m->to);
	bytes_put_le64(v + 16, m->epoch);
	bytes_put_le64(v + 24, m->id);
	store_batch_init(&b);
	kv_err rv = store_batch_add(&b, STORE_PUT, move_key, MOVE_KEY_LEN, v,
	    sizeof(v));
	if (rv == KV_OK)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	return rv;
}

static const store_op forget_move = {
	.kind = STORE_DELETE, .key = move_key, .key_len = MOVE_KEY_LEN,
};

/*
 * Undoes move m: the partition stays with (or returns to) its source at
 * an epoch above any the move used, the target forgets what it copied
 * and the source stops recording. Best effort towards the nodes: the
 * worker's resends repair an owner that did not hear.
 */
static void
undo(node *n, const move_rec *m)
{
	catalog_state *cs = n->cat;
	catalog *c = NULL;
	table tc = { 0 };
	bool have = false;
	uint64_t version = 0;
	arena a;
	rpc_response resp;

	arena_init(&a);
	rpc_request ab = { .op = RPC_MOVE_STEP, .limit = MOVE_STEP_ABORT,
	    .move_id = m->id };
	move_call(n, m->to, &ab, &a, &resp, MOVE_STEP_MS);
	wire_response_fini(&resp);
	pthread_mutex_lock(&cs->mu);
	if (catalog_clone(cs->cat, &c) == KV_OK) {
		table *t = find_by_id(c, m->table_id);
		for (size_t i = 0; t != NULL && i < t->n_parts; i++) {
			partition *p = &t->parts[i];
			if (p->id != m->part || p->node != m->from)
				continue;
			/* Above the fence (epoch + 1) and any hand-over. */
			if (p->epoch < m->epoch + 3)
				p->epoch = m->epoch + 3;
		}
		if (t != NULL)
			have = table_copy(t, &tc) == KV_OK;
		if (catalog_publish_locked(n, c, &forget_move) == KV_OK) {
			c = NULL;
			version = cs->cat->version;
		}
		if (t != NULL)
			catalog_resend_add_locked(cs, m->table_id);
	}
	cs->moving_table = cs->moving_part = 0;
	pthread_mutex_unlock(&cs->mu);
	catalog_free(c);
	if (have) {
		/* The source takes the new epoch; the target drops any record
		 * the hand-over gave it. */
		catalog_tell(n, m->from, RPC_ASSIGN, &tc, version);
		catalog_tell(n, m->to, RPC_ASSIGN, &tc, version);
		table_fini(&tc);
	}
	rpc_request end = { .op = RPC_MOVE_END, .table_id = m->table_id,
	    .part = m->part, .move_id = m->id };
	move_call(n, m->from, &end, &a, &resp, MOVE_STEP_MS);
	wire_response_fini(&resp);
	arena_fini(&a);
}

void
reshape_recover(node *n)
{
	uint8_t *v = NULL;
	size_t vl = 0;
	bool found = false;
	if (store_get(n->st, move_key, MOVE_KEY_LEN, &v, &vl, &found) !=
	    KV_OK || !found) {
		free(v);
		return;
	}
	if (vl != MOVE_VAL_LEN) {
		free(v);
		return;
	}
	move_rec m = {
		.table_id = bytes_get_le32(v), .part = bytes_get_le32(v + 4),
		.from = bytes_get_le32(v + 8), .to = bytes_get_le32(v + 12),
		.epoch = bytes_get_le64(v + 16), .id = bytes_get_le64(v + 24),
	};
	free(v);
	fprintf(stderr, "kv-node %u: undoing the move of partition %u of "
	    "table %u from node %u to node %u that a restart cut short\n",
	    n->index, m.part, m.table_id, m.from, m.to);
	if (m.from < n->cfg.n_nodes && m.to < n->cfg.n_nodes)
		undo(n, &m);
}

static uint64_t
random_id(void)
{
	uint64_t v = 0;
	FILE *f = fopen("/dev/urandom", "rb");
	if (f != NULL) {
		if (fread(&v, sizeof(v), 1, f) != 1)
			v = 0;
		fclose(f);
	}
	if (v == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t) ts.tv_nsec * 2654435761u ^
		    (uint64_t) ts.tv_sec;
	}
	return v != 0 ? v : 1;
}

/*
 * For tests of crashes at each step: a move asked with limit = k pauses
 * max_bytes ms after step k (MOVE_PAUSE_*), so that a node can be
 * killed there (kv-admin partition move --pause-after STEP MS).
 */
static void
pause_after(const rpc_request *req, uint32_t step)
{
	if (req->limit == step && req->max_bytes > 0) {
		fprintf(stderr, "kv-node: move paused after step %u for %llu "
		    "ms\n", step, (unsigned long long) req->max_bytes);
		struct timespec ts = {
			.tv_sec = (time_t) (req->max_bytes / 1000),
			.tv_nsec = (long) (req->max_bytes % 1000) * 1000000L,
		};
		nanosleep(&ts, NULL);
	}
}

/*
 * The move itself; fills *why on failure. The table snapshot t is the
 * catalog's at the start.
 */
static kv_err
run_move(node *n, const rpc_request *ask, move_rec *m, const table *t,
    uint64_t *items, double *fenced_s, arena *a, char *why, size_t whylen)
{
	rpc_response resp;
	kv_err rv;
	const char *step = "begin";

	rpc_request begin = { .op = RPC_MOVE_BEGIN, .table_id = m->table_id,
	    .part = m->part, .epoch = m->epoch, .move_id = m->id };
	/*
	 * The source may not have heard of the partition yet (a piece of a
	 * split a moment ago): it answers STALE_ROUTE until its ASSIGN
	 * comes, which the worker sends at once. It answers BUSY while
	 * transactions prepared there hold items of the partition
	 * (node/txn.h): they finish within milliseconds, or are resolved
	 * within TXN_RESOLVE_MS.
	 */
	for (int tries = 0;; tries++) {
		rv = move_call(n, m->from, &begin, a, &resp, MOVE_STEP_MS);
		if ((rv != KV_STALE_ROUTE && rv != KV_BUSY) || tries == 80)
			break;
		wire_response_fini(&resp);
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (rv != KV_OK)
		goto fail;
	wire_response_fini(&resp);
	pause_after(ask, MOVE_PAUSE_BEGIN);
	step = "start";
	rpc_request start = { .op = RPC_MOVE_STEP, .limit = MOVE_STEP_START,
	    .table = t, .table_id = m->table_id, .part = m->part,
	    .node = m->from, .move_id = m->id };
	if ((rv = move_call(n, m->to, &start, a, &resp,
	    MOVE_STEP_MS)) != KV_OK)
		goto fail;
	wire_response_fini(&resp);
	step = "copy";
	rpc_request copy = { .op = RPC_MOVE_STEP, .limit = MOVE_STEP_COPY,
	    .table_id = m->table_id, .part = m->part, .move_id = m->id };
	double paced_from = clock_mono_s();
	for (uint64_t chunk = 1;; chunk++) {
		arena ca;
		arena_init(&ca);
		rv = move_call(n, m->to, &copy, &ca, &resp, MOVE_STEP_MS);
		if (rv == KV_OK) {
			*items += resp.read_bytes;
			/* The cursor outlives this chunk's arena. */
			copy.range_lo = resp.found ? (const uint8_t *) arena_dup(a,
			    resp.last_item, resp.last_item_len) : NULL;
			copy.range_lo_len = resp.found ? resp.last_item_len : 0;
			if (resp.found && copy.range_lo == NULL)
				rv = KV_ENOMEM;
		}
		bool more = rv == KV_OK && resp.found;
		if (rv != KV_OK)
			snprintf(why, whylen, "copy failed: %s%s%s",
			    kv_err_name(rv), resp.message != NULL ? ": " : "",
			    resp.message != NULL ? resp.message : "");
		wire_response_fini(&resp);
		arena_fini(&ca);
		if (rv != KV_OK)
			return rv;
		if (!more)
			break;
		pause_after(ask, MOVE_PAUSE_CHUNK);
		/* Chunk k is due no sooner than k chunks at the paced rate. */
		double due = paced_from + (double) chunk * MOVE_CHUNK_BYTES /
		    (MOVE_COPY_MB_S * 1048576.0) - clock_mono_s();
		if (due > 0) {
			struct timespec ts = { .tv_sec = (time_t) due,
			    .tv_nsec = (long) ((due - (double) (time_t) due) *
			    1e9) };
			nanosleep(&ts, NULL);
		}
	}
	pause_after(ask, MOVE_PAUSE_COPY);
	bool plant = ask->limit == MOVE_PLANT_SKIP_CATCH_UP;
	if (plant) {
		fprintf(stderr, "kv-node: PLANTED FAULT: the move skips its "
		    "catch-up\n");
		rpc_request hold = { .limit = MOVE_PLANT_SKIP_CATCH_UP,
		    .max_bytes = ask->max_bytes };
		pause_after(&hold, MOVE_PLANT_SKIP_CATCH_UP);
	}
	step = "catch-up";
	rpc_request drain = { .op = RPC_MOVE_STEP, .limit = MOVE_STEP_DRAIN,
	    .table_id = m->table_id, .part = m->part, .move_id = m->id };
	uint32_t fewest = UINT32_MAX;
	for (int r = 0, stalled = 0; r < DRAIN_ROUNDS && !plant; r++) {
		rv = move_call(n, m->to, &drain, a, &resp, MOVE_STEP_MS);
		uint32_t left = resp.scanned;
		wire_response_fini(&resp);
		if (rv != KV_OK)
			goto fail;
		if (left < DRAIN_BEFORE_FENCE)
			break;
		if (left < fewest) {
			fewest = left;
			stalled = 0;
		} else if (++stalled == DRAIN_STALLED) {
			break;
		}
	}
	pause_after(ask, MOVE_PAUSE_CATCH_UP);
	step = "fence";
	double t0 = clock_mono_s();
	rpc_request fence = { .op = RPC_MOVE_FENCE, .table_id = m->table_id,
	    .part = m->part, .epoch = m->epoch + 1, .move_id = m->id };
	if ((rv = move_call(n, m->from, &fence, a, &resp,
	    MOVE_STEP_MS)) != KV_OK)
		goto fail;
	wire_response_fini(&resp);
	pause_after(ask, MOVE_PAUSE_FENCE);
	step = "last catch-up";
	for (int r = 0; !plant; r++) {
		rv = move_call(n, m->to, &drain, a, &resp, MOVE_STEP_MS);
		uint32_t left = resp.scanned;
		uint64_t got = resp.read_bytes;
		wire_response_fini(&resp);
		if (rv != KV_OK)
			goto fail;
		/* Done when a batch comes empty: the last one is acked. */
		if (left == 0 && got == 0)
			break;
		if (r == DRAIN_ROUNDS) {
			rv = KV_BUSY;
			goto fail;
		}
	}
	*fenced_s = clock_mono_s() - t0;
	return KV_OK;
fail:
	snprintf(why, whylen, "%s failed: %s%s%s", step, kv_err_name(rv),
	    resp.message != NULL ? ": " : "",
	    resp.message != NULL ? resp.message : "");
	wire_response_fini(&resp);
	return rv;
}

void
reshape_move(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	catalog_state *cs = n->cat;
	move_rec m = { 0 };
	table snap = { 0 }, handed = { 0 };
	char why[256] = "";
	uint64_t items = 0;
	double fenced_s = 0, t0 = clock_mono_s();
	catalog *c = NULL;
	jbuf ev = { 0 };

	if (cs == NULL || req->table_name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&cs->move_serial);
	pthread_mutex_lock(&cs->mu);
	table *t = catalog_find_mut(cs->cat, req->table_name);
	const partition *p = NULL;
	for (size_t i = 0; t != NULL && i < t->n_parts; i++)
		if (t->parts[i].id == req->part)
			p = &t->parts[i];
	if (t == NULL) {
		resp->code = KV_NO_TABLE;
	} else if (t->status != TABLE_ACTIVE) {
		resp->code = KV_IN_USE;
		resp->message = "the table is not ACTIVE";
	} else if (p == NULL) {
		resp->code = KV_EINVAL;
		resp->message = "no such partition";
	} else if (req->node >= n->cfg.n_nodes) {
		resp->code = KV_EINVAL;
		resp->message = "no such node";
	} else if (req->node == p->node) {
		resp->code = KV_EINVAL;
		resp->message = "the partition is on that node already";
	} else if (p->keyed) {
		/* A keyed group lives on one node (catalog.h). */
		resp->code = KV_EINVAL;
		resp->message = "a partition of part of one item collection "
		    "stays with the rest of it";
	} else if ((resp->code = table_copy(t, &snap)) == KV_OK) {
		m = (move_rec) { .table_id = t->id, .part = p->id,
		    .from = p->node, .to = req->node, .epoch = p->epoch,
		    .id = random_id() };
		cs->moving_table = t->id;
		cs->moving_part = p->id;
	}
	pthread_mutex_unlock(&cs->mu);
	if (resp->code != KV_OK)
		goto out;
	if ((resp->code = record_move(n, &m)) != KV_OK) {
		pthread_mutex_lock(&cs->mu);
		cs->moving_table = cs->moving_part = 0;
		pthread_mutex_unlock(&cs->mu);
		goto out;
	}
	fprintf(stderr, "kv-node %u: moving partition %u of table %s from "
	    "node %u to node %u (%s)\n", n->index, m.part, snap.name, m.from,
	    m.to, reason_name(req->reason));
	kv_err rv = run_move(n, req, &m, &snap, &items, &fenced_s, a, why,
	    sizeof(why));
	uint64_t version = 0;
	if (rv == KV_OK) {
		/* The target takes the partition, then the catalog says so. */
		pthread_mutex_lock(&cs->mu);
		rv = catalog_clone(cs->cat, &c);
		table *ct = rv == KV_OK ? find_by_id(c, m.table_id) : NULL;
		partition *cp = NULL;
		for (size_t i = 0; ct != NULL && i < ct->n_parts; i++)
			if (ct->parts[i].id == m.part &&
			    ct->parts[i].node == m.from &&
			    ct->parts[i].epoch == m.epoch)
				cp = &ct->parts[i];
		if (rv == KV_OK && cp == NULL) {
			rv = KV_IN_USE;
			snprintf(why, sizeof(why), "the table changed during "
			    "the move");
		}
		if (rv == KV_OK) {
			cp->node = m.to;
			cp->epoch = m.epoch + 2;
			version = cs->cat->version + 1;
			rv = table_copy(ct, &handed);
		}
		pthread_mutex_unlock(&cs->mu);
		/*
		 * Told before the catalog changes, so routers that learn of
		 * the change find it serving. A crash here leaves the move
		 * record: the restart undoes it, and tells the target.
		 */
		if (rv == KV_OK && (rv = catalog_tell(n, m.to, RPC_ASSIGN,
		    &handed, version)) != KV_OK)
			snprintf(why, sizeof(why), "the target did not take "
			    "the partition: %s", kv_err_name(rv));
		if (rv == KV_OK)
			pause_after(req, MOVE_PAUSE_TAKEN);
		if (rv == KV_OK) {
			pthread_mutex_lock(&cs->mu);
			/* The catalog may have changed meanwhile: edit anew. */
			catalog_free(c);
			c = NULL;
			rv = catalog_clone(cs->cat, &c);
			ct = rv == KV_OK ? find_by_id(c, m.table_id) : NULL;
			cp = NULL;
			for (size_t i = 0; ct != NULL && i < ct->n_parts; i++)
				if (ct->parts[i].id == m.part &&
				    ct->parts[i].epoch == m.epoch)
					cp = &ct->parts[i];
			if (cp != NULL) {
				cp->node = m.to;
				cp->epoch = m.epoch + 2;
				rv = catalog_publish_locked(n, c, &forget_move);
				if (rv == KV_OK) {
					c = NULL;
					version = cs->cat->version;
					catalog_resend_add_locked(cs,
					    m.table_id);
					cs->moving_table = cs->moving_part = 0;
					/* The source hears the table as
					 * published. */
					table_fini(&handed);
					if (table_copy(ct, &handed) != KV_OK)
						memset(&handed, 0,
						    sizeof(handed));
				}
			} else if (rv == KV_OK) {
				rv = KV_IN_USE;
			}
			pthread_mutex_unlock(&cs->mu);
		}
	}
	if (rv != KV_OK) {
		fprintf(stderr, "kv-node %u: move of partition %u of table %s "
		    "undone: %s\n", n->index, m.part, snap.name, why);
		undo(n, &m);
	} else {
		/* The source drops the partition and deletes its items (the
		 * worker's resend tells it if this copy could not be made). */
		if (handed.name != NULL)
			catalog_tell(n, m.from, RPC_ASSIGN, &handed, version);
		rpc_request end = { .op = RPC_MOVE_END,
		    .table_id = m.table_id, .part = m.part, .move_id = m.id };
		rpc_response er;
		move_call(n, m.from, &end, a, &er, MOVE_STEP_MS);
		wire_response_fini(&er);
	}
	double secs = clock_mono_s() - t0;
	pthread_mutex_lock(&cs->mu);
	const partition *sp = NULL;
	for (size_t i = 0; i < snap.n_parts; i++)
		if (snap.parts[i].id == m.part)
			sp = &snap.parts[i];
	jb_head(&ev, cs, "move", req->reason, &snap, sp);
	jb_add(&ev, ",\"from\":%u,\"to\":%u,\"outcome\":", m.from, m.to);
	jb_str(&ev, rv == KV_OK ? "done" : why);
	jb_add(&ev, ",\"items_copied\":%" PRIu64 ",\"seconds\":%.3f,"
	    "\"fenced_ms\":%.1f}", items, secs, fenced_s * 1e3);
	uint32_t r = req->reason < 5 ? req->reason : 0;
	if (rv == KV_OK)
		cs->moves[r]++;
	else
		cs->moves_failed[r]++;
	if (!ev.failed) {
		event_add_locked(cs, ev.s);
		ev.s = NULL;
	}
	pthread_mutex_unlock(&cs->mu);
	resp->code = rv;
	if (rv != KV_OK) {
		resp->message = arena_dup(a, why, strlen(why));
	} else {
		char msg[160];
		snprintf(msg, sizeof(msg), "moved %" PRIu64 " items in %.3f s "
		    "(writes fenced for %.1f ms)", items, secs,
		    fenced_s * 1e3);
		resp->message = arena_dup(a, msg, strlen(msg));
	}
out:
	pthread_mutex_unlock(&cs->move_serial);
	catalog_free(c);
	table_fini(&snap);
	table_fini(&handed);
	free(ev.s);
}

/* ---- borrowing (instant adaptive capacity) ---- */

/* Rates lent hold this long; a round comes every second. */
#define BORROW_HOLD_MS 3000
/* A partition that used this share of its rate is hungry too. */
#define BORROW_HUNGRY 0.9

static const part_stats *
stats_of(const survey_result *res, size_t count,
    const survey_target *targets, uint32_t node, uint32_t tid, uint32_t pid)
{
	for (size_t i = 0; i < count; i++) {
		if (targets[i].kind != MEMBER_NODE || targets[i].index != node ||
		    res[i].outcome != SURVEY_ANSWERED)
			continue;
		for (size_t k = 0; k < res[i].m.n_stats; k++)
			if (res[i].m.stats[k].table_id == tid &&
			    res[i].m.stats[k].part == pid)
				return &res[i].m.stats[k];
	}
	return NULL;
}

static const struct borrow_prev *
prev_of(const catalog_state *cs, uint32_t tid, uint32_t pid)
{
	for (size_t i = 0; i < cs->n_prev; i++)
		if (cs->prev[i].table_id == tid && cs->prev[i].part == pid)
			return &cs->prev[i];
	return NULL;
}

static bool
hungry_at(double used, double rate, bool throttled)
{
	return throttled || used >= BORROW_HUNGRY * rate;
}

/*
 * One dimension of one table of n partitions: out[i] is what hungry
 * partition i may use (its use plus an even part of the table's unused
 * units), 0 for the others (their share).
 */
static void
lend(size_t n, const double *used, const double *rate, const bool *thr,
    double units, double *out)
{
	double total = 0;
	size_t hungry = 0;
	for (size_t i = 0; i < n; i++) {
		total += used[i];
		out[i] = 0;
		hungry += hungry_at(used[i], rate[i], thr[i]);
	}
	double spare = units - total;
	if (hungry == 0 || spare <= 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (hungry_at(used[i], rate[i], thr[i]))
			out[i] = used[i] + spare / (double) hungry;
}

/* Appends one RPC_BORROW entry for node nd; false when out of memory. */
static bool
add_entry(uint8_t **ent, size_t *n_ent, uint32_t tid, uint32_t pid,
    double r, double w)
{
	uint8_t *g = realloc(*ent, (*n_ent + 1) * RPC_BORROW_ENTRY);
	if (g == NULL)
		return false;
	*ent = g;
	uint8_t *e = g + (*n_ent)++ * RPC_BORROW_ENTRY;
	bytes_put_le64(e, (uint64_t) tid | (uint64_t) pid << 32);
	bytes_put_le64(e + 8, (uint64_t) (r * 1e3));
	bytes_put_le64(e + 16, (uint64_t) (w * 1e3));
	return true;
}

void
reshape_borrow(node *n, const survey_target *targets,
    const survey_result *res, size_t count)
{
	catalog_state *cs = n->cat;
	catalog *c = NULL;
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	kv_err rv = catalog_clone(cs->cat, &c);
	pthread_mutex_unlock(&cs->mu);
	if (rv != KV_OK)
		return;
	int64_t now = clock_mono_ms();
	double dt = (double) (now - cs->prev_ms) / 1e3;
	bool rates_ok = cs->prev_ms != 0 && dt > 0.2 && dt < 5;
	size_t n_parts = 0;
	for (size_t t = 0; t < c->n_tables; t++)
		if (c->tables[t].billing == BILLING_PROVISIONED)
			n_parts += c->tables[t].n_parts;
	struct borrow_prev *next = calloc(n_parts + 1, sizeof(*next));
	uint8_t *ent[CONFIG_MAX_NODES] = { NULL }; /* each node's entries */
	size_t n_ent[CONFIG_MAX_NODES] = { 0 };
	size_t n_next = 0;
	bool lent = false;
	for (size_t t = 0; next != NULL && t < c->n_tables; t++) {
		const table *tb = &c->tables[t];
		if (tb->billing != BILLING_PROVISIONED || tb->n_parts == 0 ||
		    !table_serving(tb))
			continue;
		size_t k = tb->n_parts;
		/* used r, used w, rate r, rate w, lent r, lent w */
		double *v = calloc(6 * k, sizeof(double));
		bool *thr = calloc(2 * k, sizeof(bool));
		bool complete = v != NULL && thr != NULL;
		for (size_t i = 0; v != NULL && thr != NULL && i < k; i++) {
			const partition *pp = &tb->parts[i];
			const part_stats *s = stats_of(res, count, targets,
			    pp->node, tb->id, pp->id);
			if (s == NULL) {
				complete = false; /* an owner did not answer */
				continue;
			}
			next[n_next++] = (struct borrow_prev) { tb->id, pp->id,
			    s->read_charged, s->write_charged,
			    s->read_throttled, s->write_throttled };
			const struct borrow_prev *b = prev_of(cs, tb->id,
			    pp->id);
			if (b == NULL || !rates_ok || s->read_charged < b->rd ||
			    s->write_charged < b->wr) {
				complete = false; /* no rate yet */
				continue;
			}
			v[i] = (double) (s->read_charged - b->rd) / 2 / dt;
			v[k + i] = (double) (s->write_charged - b->wr) / 2 / dt;
			v[2 * k + i] = (double) s->read_rate / 2e6;
			v[3 * k + i] = (double) s->write_rate / 2e6;
			thr[i] = s->read_throttled > b->rd_thr;
			thr[k + i] = s->write_throttled > b->wr_thr;
		}
		if (complete) {
			lend(k, v, v + 2 * k, thr, (double) tb->rcu, v + 4 * k);
			lend(k, v + k, v + 3 * k, thr + k, (double) tb->wcu,
			    v + 5 * k);
			for (size_t i = 0; i < k; i++) {
				double r = v[4 * k + i], w = v[5 * k + i];
				uint32_t nd = tb->parts[i].node;
				if ((r == 0 && w == 0) || nd >= CONFIG_MAX_NODES)
					continue;
				lent |= add_entry(&ent[nd], &n_ent[nd], tb->id,
				    tb->parts[i].id, r, w);
			}
		}
		free(v);
		free(thr);
	}
	if (next != NULL) {
		free(cs->prev);
		cs->prev = next;
		cs->n_prev = n_next;
		cs->prev_ms = now;
	}
	catalog_free(c);
	for (uint32_t i = 0; i < n->cfg.n_nodes && i < CONFIG_MAX_NODES; i++) {
		if (n_ent[i] == 0)
			continue;
		rpc_request req = { .op = RPC_BORROW, .item = ent[i],
		    .item_len = n_ent[i] * RPC_BORROW_ENTRY,
		    .max_bytes = BORROW_HOLD_MS };
		rpc_response resp;
		arena a;
		arena_init(&a);
		memset(&resp, 0, sizeof(resp));
		if (i == n->index)
			node_dispatch(n, &req, &a, &resp);
		else
			cluster_tell_ms(n, i, &req, &a, &resp, 500);
		wire_response_fini(&resp);
		arena_fini(&a);
		free(ent[i]);
	}
	if (lent) {
		pthread_mutex_lock(&cs->mu);
		cs->lent_rounds++;
		pthread_mutex_unlock(&cs->mu);
	}
}

/* ---- placement: nodes added and drained, pieces of heat splits ---- */

/* Partitions per node over every table. Needs mu. */
static void
count_parts_locked(node *n, uint32_t *count)
{
	memset(count, 0, CONFIG_MAX_NODES * sizeof(*count));
	for (size_t t = 0; t < n->cat->cat->n_tables; t++) {
		const table *tb = &n->cat->cat->tables[t];
		for (size_t i = 0; i < tb->n_parts; i++)
			if (tb->parts[i].node < CONFIG_MAX_NODES)
				count[tb->parts[i].node]++;
	}
}

/* The node that takes partitions with the fewest, other than `not`. */
static int
least_loaded_locked(node *n, const uint32_t *count, uint32_t not)
{
	int best = -1;
	for (uint32_t i = 0; i < n->cfg.n_nodes; i++)
		if (i != not && catalog_node_eligible(n, i) &&
		    (best < 0 || count[i] < count[best]))
			best = (int) i;
	return best;
}

/* Moves one partition (table by id) to node `to`; KV_OK when done. */
static kv_err
move_to(node *n, uint32_t table_id, uint32_t part, uint32_t to,
    rpc_reason reason, char *why, size_t whylen)
{
	char name[256] = "";
	pthread_mutex_lock(&n->cat->mu);
	const table *t = find_by_id(n->cat->cat, table_id);
	if (t != NULL)
		snprintf(name, sizeof(name), "%s", t->name);
	pthread_mutex_unlock(&n->cat->mu);
	if (name[0] == '\0')
		return KV_NO_TABLE;
	rpc_request req = { .op = RPC_MOVE, .table_name = name, .part = part,
	    .node = to, .reason = reason };
	rpc_response resp;
	arena a;
	arena_init(&a);
	memset(&resp, 0, sizeof(resp));
	reshape_move(n, &req, &a, &resp);
	kv_err rv = resp.code;
	if (rv != KV_OK && why != NULL)
		snprintf(why, whylen, "%s", resp.message != NULL ?
		    resp.message : kv_err_name(rv));
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv;
}

/*
 * After a split for heat: a piece goes to the least loaded node when its
 * owner holds at least two partitions more (counted over all tables).
 */
static void
place_one(node *n, uint32_t table_id, uint32_t part)
{
	uint32_t count[CONFIG_MAX_NODES];
	int to = -1;
	pthread_mutex_lock(&n->cat->mu);
	const table *t = find_by_id(n->cat->cat, table_id);
	for (size_t i = 0; t != NULL && t->status == TABLE_ACTIVE &&
	    i < t->n_parts; i++) {
		if (t->parts[i].id != part || t->parts[i].keyed)
			continue;
		uint32_t from = t->parts[i].node;
		count_parts_locked(n, count);
		to = least_loaded_locked(n, count, from);
		if (to >= 0 && from < CONFIG_MAX_NODES &&
		    count[from] < count[to] + 2)
			to = -1;
	}
	pthread_mutex_unlock(&n->cat->mu);
	if (to >= 0)
		move_to(n, table_id, part, (uint32_t) to,
		    RPC_REASON_REBALANCE, NULL, 0);
}

static void *
mover(void *arg)
{
	node *n = arg;
	catalog_state *cs = n->cat;
	thread_name("kv-mover");
	pthread_mutex_lock(&cs->mu);
	while (!cs->stop) {
		if (cs->n_place == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&cs->cv, &cs->mu, &ts);
			continue;
		}
		uint32_t tid = cs->place[0].table_id, part = cs->place[0].part;
		memmove(&cs->place[0], &cs->place[1],
		    --cs->n_place * sizeof(cs->place[0]));
		pthread_mutex_unlock(&cs->mu);
		place_one(n, tid, part);
		pthread_mutex_lock(&cs->mu);
	}
	pthread_mutex_unlock(&cs->mu);
	return NULL;
}

kv_err
reshape_start(node *n)
{
	if (pthread_create(&n->cat->mover, NULL, mover, n) != 0)
		return KV_ENOMEM;
	n->cat->mover_started = true;
	return KV_OK;
}

void
reshape_stop(node *n)
{
	catalog_state *cs = n->cat;
	if (!cs->mover_started)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->stop = true;
	pthread_cond_broadcast(&cs->cv);
	pthread_mutex_unlock(&cs->mu);
	pthread_join(cs->mover, NULL);
	cs->mover_started = false;
}

/* Queues the pieces of a heat split for placement. Needs mu. */
static void
queue_pieces_locked(catalog_state *cs, const table *t, size_t at,
    size_t pieces, bool hot_item)
{
	for (size_t k = 0; k < pieces; k++) {
		const partition *p = &t->parts[at + k];
		if (hot_item && p->lo == p->last)
			continue; /* the hot item stays where it is */
		if (cs->n_place == sizeof(cs->place) / sizeof(cs->place[0]))
			return;
		cs->place[cs->n_place].table_id = t->id;
		cs->place[cs->n_place++].part = p->id;
	}
	pthread_cond_broadcast(&cs->cv);
}

void
reshape_node(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	catalog_state *cs = n->cat;
	uint32_t nd = req->node, count[CONFIG_MAX_NODES];
	bool add = req->limit == RPC_NODE_ADD;
	char why[256] = "";
	size_t moved = 0;
	int failures = 0;
	bool keyed_left = false;

	if (cs == NULL || (req->limit != RPC_NODE_ADD &&
	    req->limit != RPC_NODE_DRAIN)) {
		resp->code = KV_PROTO;
		return;
	}
	if (nd >= n->cfg.n_nodes || nd >= 64) {
		resp->code = KV_EINVAL;
		resp->message = "no such node";
		return;
	}
	pthread_mutex_lock(&cs->mu);
	uint64_t bit = 1ull << nd, add0 = cs->added_nodes,
	    drain0 = cs->drained_nodes;
	if (add) {
		cs->added_nodes |= bit;
		cs->drained_nodes &= ~bit;
	} else {
		cs->drained_nodes |= bit;
	}
	resp->code = KV_OK;
	if (!add && least_loaded_locked(n, (uint32_t[CONFIG_MAX_NODES]) { 0 },
	    nd) < 0) {
		resp->code = KV_EINVAL;
		resp->message = "no other node would take its partitions";
	} else {
		resp->code = catalog_nodes_save_locked(n);
	}
	if (resp->code != KV_OK) {
		cs->added_nodes = add0;
		cs->drained_nodes = drain0;
	}
	pthread_mutex_unlock(&cs->mu);
	if (resp->code != KV_OK)
		return;
	fprintf(stderr, "kv-node %u: %s node %u\n", n->index,
	    add ? "adding" : "draining", nd);
	for (int round = 0; round < 100000 && failures < 3; round++) {
		uint32_t tid = 0, part = 0;
		int to = -1;
		bool waiting = false;
		keyed_left = false;
		pthread_mutex_lock(&cs->mu);
		count_parts_locked(n, count);
		for (size_t t = 0; to < 0 && t < cs->cat->n_tables; t++) {
			const table *tb = &cs->cat->tables[t];
			for (size_t i = 0; to < 0 && i < tb->n_parts; i++) {
				uint32_t o = tb->parts[i].node;
				if (tb->parts[i].keyed) {
					keyed_left |= o == nd && !add;
					continue; /* stays with its group */
				}
				if (add) {
					/* From the fullest node, while it holds
					 * two more than the new one. */
					int full = -1;
					for (uint32_t k = 0; k < n->cfg.n_nodes;
					    k++)
						if (k != nd && (full < 0 ||
						    count[k] > count[full]))
							full = (int) k;
					if (full < 0 || o != (uint32_t) full ||
					    count[o] < count[nd] + 2)
						continue;
				} else if (o != nd) {
					continue;
				}
				if (tb->status != TABLE_ACTIVE) {
					waiting = true;
					continue;
				}
				tid = tb->id;
				part = tb->parts[i].id;
				to = add ? (int) nd : least_loaded_locked(n,
				    count, nd);
			}
		}
		pthread_mutex_unlock(&cs->mu);
		if (to < 0 && waiting) {
			/* A table being created or changed: soon ACTIVE. */
			struct timespec ts = { 0, 100 * 1000000L };
			nanosleep(&ts, NULL);
			continue;
		}
		if (to < 0)
			break;
		if (move_to(n, tid, part, (uint32_t) to,
		    RPC_REASON_REBALANCE, why, sizeof(why)) == KV_OK) {
			moved++;
			failures = 0;
		} else {
			failures++;
		}
	}
	char msg[400];
	if (failures >= 3) {
		resp->code = KV_UNAVAILABLE;
		snprintf(msg, sizeof(msg), "moved %zu partitions, then a move "
		    "failed three times: %s", moved, why);
	} else {
		snprintf(msg, sizeof(msg), "moved %zu partition%s %s node %u%s",
		    moved, moved == 1 ? "" : "s", add ? "onto" : "off", nd,
		    keyed_left ? " (partitions split on the sort key stay: "
		    "such a group does not move)" : "");
	}
	resp->message = arena_dup(a, msg, strlen(msg));
	fprintf(stderr, "kv-node %u: %s\n", n->index, msg);
}
