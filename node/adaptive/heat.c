/*
 * heat.c — the partitions' top-k sketches, the choice of cuts, and the
 * monitor that asks for splits (see heat.h).
 *
 * Locking rule: a sketch is guarded by its partition's cap_mu. The
 * monitor holds the partition map's lock shared while it reads the
 * partitions, and calls nothing outside the node while holding it: the
 * asks go out after it is released. Its own state (stop) is guarded by
 * heat_mon.mu.
 */
#include "heat.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "index.h"
#include "keyenc.h"
#include "node.h"
#include "number.h"
#include "part.h"
#include "throttle.h"
#include "value.h"
#include "thread_name.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

int64_t
heat_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec;
}

/* Halves every count, once per HEAT_DECAY_S. */
static void
decay(heat *ht, int64_t now_s)
{
	if (ht->decayed_s == 0) {
		ht->decayed_s = now_s;
		return;
	}
	while (now_s - ht->decayed_s >= HEAT_DECAY_S) {
		ht->decayed_s += HEAT_DECAY_S;
		ht->rd /= 2;
		ht->wr /= 2;
		ht->throttled /= 2;
		for (size_t i = 0; i < ht->n; i++) {
			heat_key *k = &ht->top[i];
			k->weight /= 2;
			k->err /= 2;
			k->rd /= 2;
			k->wr /= 2;
			k->throttled /= 2;
		}
		if (ht->rd == 0 && ht->wr == 0 && ht->throttled == 0) {
			ht->n = 0; /* quiet: start over */
			ht->decayed_s = now_s;
		}
	}
}

void
heat_note(heat *ht, const uint8_t *key, size_t kl, bool write,
    uint64_t half_units, bool throttled, bool by_key, int64_t now_s)
{
	decay(ht, now_s);
	if (write)
		ht->wr += half_units;
	else
		ht->rd += half_units;
	ht->throttled += throttled;
	if (key == NULL || kl <= KEYENC_PREFIX)
		return;
	const uint8_t *suf = key + KEYENC_PREFIX;
	size_t sl = kl - KEYENC_PREFIX;
	uint64_t h = by_key ? XXH3_64bits(suf, sl) : keyenc_key_hash(key);
	uint64_t w = half_units + (throttled ? 2 : 0);
	heat_key *e = NULL;
	for (size_t i = 0; i < ht->n; i++)
		if (ht->top[i].h == h) {
			e = &ht->top[i];
			break;
		}
	if (e == NULL && ht->n < HEAT_TOPK) {
		e = &ht->top[ht->n++];
		memset(e, 0, sizeof(*e));
	} else if (e == NULL) {
		/* Space-saving: the lightest entry makes way. */
		e = &ht->top[0];
		for (size_t i = 1; i < ht->n; i++)
			if (ht->top[i].weight < e->weight)
				e = &ht->top[i];
		uint64_t floor = e->weight;
		memset(e, 0, sizeof(*e));
		e->weight = e->err = floor;
	}
	if (e->pk_len == 0 || e->h != h) {
		e->h = h;
		const uint8_t *pk = suf;
		size_t n = by_key ? sl : keyenc_value_extent(pk, sl);
		if (n == 0)
			n = sl;
		e->exact = n <= HEAT_PK_MAX;
		if (n > HEAT_PK_MAX) {
			n = HEAT_PK_MAX;
			/* A string is cut at a whole UTF-8 character. */
			while (pk[0] == VAL_S && n > 1 &&
			    (pk[n] & 0xC0) == 0x80)
				n--;
		}
		memcpy(e->pk, key + KEYENC_PREFIX, n);
		e->pk_len = (uint8_t) n;
	}
	e->weight += w;
	if (write)
		e->wr += half_units;
	else
		e->rd += half_units;
	e->throttled += throttled;
}

static int
by_hash(const void *a, const void *b)
{
	const heat_key *x = a, *y = b;
	return x->h < y->h ? -1 : x->h > y->h;
}

size_t
heat_cuts(const heat *ht, uint64_t lo, uint64_t last, bool write,
    uint64_t cuts[2], bool *hot_item)
{
	heat_key keys[HEAT_TOPK];
	size_t n = 0;
	long double total = write ? ht->wr : ht->rd, inside = 0;

	*hot_item = false;
	if (lo >= last)
		return 0;
	for (size_t i = 0; i < ht->n; i++) {
		uint64_t u = write ? ht->top[i].wr : ht->top[i].rd;
		if (ht->top[i].h < lo || ht->top[i].h > last || u == 0)
			continue;
		keys[n] = ht->top[i];
		inside += u;
		n++;
	}
	if (total < inside)
		total = inside;
	if (total <= 0) {
		cuts[0] = lo + (last - lo) / 2 + 1;
		return 1;
	}
	qsort(keys, n, sizeof(keys[0]), by_hash);
	/* One key with half the weight or more: cut it out alone. */
	for (size_t i = 0; i < n; i++) {
		uint64_t u = write ? keys[i].wr : keys[i].rd;
		if ((long double) u * 2 < total)
			continue;
		size_t k = 0;
		*hot_item = true;
		if (keys[i].h > lo)
			cuts[k++] = keys[i].h;
		if (keys[i].h < last)
			cuts[k++] = keys[i].h + 1;
		return k;
	}
	/*
	 * Else the cut c where the weight of [lo, c) comes closest to half:
	 * the keys are points, the rest is spread evenly. Between two keys
	 * the weight left of c grows linearly; try its best point in each
	 * stretch and each key's own boundaries.
	 */
	long double spread = total - inside;
	long double span = (long double) (last - lo) + 1;
	long double half = total / 2, best_gap = -1;
	uint64_t best = lo + (last - lo) / 2 + 1;
	long double before = 0; /* weight of the keys left of the stretch */
	uint64_t from = lo;
	for (size_t i = 0; i <= n; i++) {
		uint64_t to = i < n ? keys[i].h : last; /* stretch [from, to] */
		/* c in (from, to]: weight left = before + spread*(c-lo)/span */
		long double want = (half - before) * span / (spread > 0 ?
		    spread : 1) + lo;
		uint64_t cands[4] = { from + 1, to, 0, 0 };
		size_t nc = 2;
		if (spread > 0 && want > (long double) from &&
		    want <= (long double) to) {
			/* The hashes either side of the exact point. */
			cands[nc++] = (uint64_t) want;
			if ((uint64_t) want < to)
				cands[nc++] = (uint64_t) want + 1;
		}
		for (size_t c = 0; c < nc; c++) {
			uint64_t x = cands[c];
			if (x <= lo || x > last || x < from + 1 || x > to)
				continue;
			long double left = before +
			    spread * ((long double) (x - lo)) / span;
			long double gap = left > half ? left - half : half - left;
			if (best_gap < 0 || gap < best_gap) {
				best_gap = gap;
				best = x;
			}
		}
		if (i < n) {
			before += write ? keys[i].wr : keys[i].rd;
			from = keys[i].h;
			/* The cut just after the key (c = h + 1). */
			if (keys[i].h < last) {
				uint64_t x = keys[i].h + 1;
				long double left = before + spread *
				    ((long double) (x - lo)) / span;
				long double gap = left > half ? left - half :
				    half - left;
				if (gap < best_gap) {
					best_gap = gap;
					best = x;
				}
			}
		}
	}
	cuts[0] = best;
	return 1;
}

static int
bytes_order(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c != 0 ? c : al < bl ? -1 : al > bl;
}

static int
by_key_bytes(const void *a, const void *b)
{
	const heat_key *x = a, *y = b;
	return bytes_order(x->pk, x->pk_len, y->pk, y->pk_len);
}

/* Whether key k lies strictly inside (from, to): a valid cut. */
static bool
inside(const uint8_t *k, size_t kl, const uint8_t *from, size_t from_len,
    const uint8_t *to, size_t to_len)
{
	return (from_len == 0 ? kl > 0 : bytes_order(k, kl, from,
	    from_len) > 0) && (to_len == 0 || bytes_order(k, kl, to,
	    to_len) < 0);
}

/*
 * What a key asked for in one dimension, in half units: what it consumed
 * and one unit for each request refused. Inside a single hot collection
 * most requests may be throttled, so consumption alone would see only
 * the few that got through.
 */
static uint64_t
demand(const heat_key *k, bool write)
{
	return (write ? k->wr : k->rd) + 2 * k->throttled;
}

size_t
heat_key_cuts(const heat *ht, const uint8_t *from, size_t from_len,
    const uint8_t *to, size_t to_len, bool write,
    uint8_t cut[2][HEAT_PK_MAX], size_t cut_len[2], bool *hot_item)
{
	heat_key keys[HEAT_TOPK];
	size_t n = 0;
	long double total = 0;

	*hot_item = false;
	for (size_t i = 0; i < ht->n; i++) {
		if (demand(&ht->top[i], write) == 0 || !ht->top[i].exact)
			continue;
		keys[n++] = ht->top[i];
		total += demand(&ht->top[i], write);
	}
	/* One key seen: it is alone already (nothing to cut it from). */
	if (total <= 0 || n < 2)
		return 0;
	qsort(keys, n, sizeof(keys[0]), by_key_bytes);
	for (size_t i = 0; i < n; i++) {
		uint64_t u = demand(&keys[i], write);
		if ((long double) u * 2 < total)
			continue;
		/* The key alone: [key, key 00), nothing lies between. */
		size_t k = 0;
		*hot_item = true;
		if (inside(keys[i].pk, keys[i].pk_len, from, from_len, to,
		    to_len)) {
			memcpy(cut[k], keys[i].pk, keys[i].pk_len);
			cut_len[k++] = keys[i].pk_len;
		}
		if (keys[i].pk_len < HEAT_PK_MAX) {
			uint8_t after[HEAT_PK_MAX];
			memcpy(after, keys[i].pk, keys[i].pk_len);
			after[keys[i].pk_len] = 0;
			if (inside(after, keys[i].pk_len + 1, from, from_len,
			    to, to_len)) {
				memcpy(cut[k], after, keys[i].pk_len + 1);
				cut_len[k++] = keys[i].pk_len + 1;
			}
		}
		return k;
	}
	/* Else where the weight, in key order, passes half. */
	long double seen = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t u = demand(&keys[i], write);
		if (seen > 0 && (seen + u) * 2 > total &&
		    inside(keys[i].pk, keys[i].pk_len, from, from_len, to,
		    to_len)) {
			/* The cut before key i, or after it if closer. */
			size_t at = i;
			if (seen * 2 < total && (seen + u) * 2 - total <
			    total - seen * 2 && i + 1 < n)
				at = i + 1;
			memcpy(cut[0], keys[at].pk, keys[at].pk_len);
			cut_len[0] = keys[at].pk_len;
			return inside(cut[0], cut_len[0], from, from_len, to,
			    to_len) ? 1 : 0;
		}
		seen += u;
	}
	return 0;
}

/*
 * Writes one encoded key value p[0..n) as "T:value" at buf + *o (within
 * len) and returns the bytes it took (n when it runs to the end).
 */
static size_t
value_text(const uint8_t *p, size_t n, char *buf, size_t len, size_t *o)
{
	if (p[0] == VAL_N) {
		number num;
		size_t used;
		char nb[64];
		if (number_decode(p + 1, n - 1, &num, &used) == KV_OK) {
			size_t m = number_format(&num, nb);
			*o += (size_t) snprintf(buf + *o, len - *o, "N:%.*s",
			    (int) m, nb);
			if (*o >= len)
				*o = len - 1; /* cut short */
			return 1 + used;
		}
		*o += (size_t) snprintf(buf + *o, len - *o, "N:?");
		return n;
	}
	bool bin = p[0] == VAL_B;
	*o += (size_t) snprintf(buf + *o, len - *o, "%s:", bin ? "B" : "S");
	if (*o >= len)
		*o = len - 1; /* cut short */
	size_t i;
	for (i = 1; i < n && *o + 4 < len; i++) {
		uint8_t c = p[i];
		if (c == 0x00 && i + 1 < n && p[i + 1] == 0x01)
			return i + 2; /* the end */
		if (c == 0x00 && i + 1 < n && p[i + 1] == 0xFF)
			i++;
		if (bin) {
			*o += (size_t) snprintf(buf + *o, len - *o, "%02x", c);
		} else if (c == '"' || c == '\\' || c < 0x20) {
			buf[(*o)++] = '?'; /* kept out of JSON's way */
		} else {
			buf[(*o)++] = (char) c;
		}
	}
	return n;
}

void
heat_key_text(const heat_key *k, char *buf, size_t len)
{
	size_t o = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	if (k->pk_len == 0)
		return;
	/* The partition key, and the sort key where the entry has one. */
	size_t used = value_text(k->pk, k->pk_len, buf, len, &o);
	if (used < k->pk_len && o + 8 < len) {
		o += (size_t) snprintf(buf + o, len - o, " / ");
		value_text(k->pk + used, k->pk_len - used, buf, len, &o);
	}
	if (o < len)
		buf[o] = '\0';
	else
		buf[len - 1] = '\0';
}

/* ---- the monitor ---- */

struct heat_mon {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	int64_t last_ns;
};

/* One ask: a split of a partition, decided under the map's lock. */
typedef struct ask {
	uint32_t table_id, part;
	uint64_t epoch, lo, last, bytes;
	uint64_t cuts[2];
	size_t n_cuts;
	/* Or, for a partition of a single hash, cuts on the sort key. */
	uint8_t kcut[2][HEAT_PK_MAX];
	size_t kcut_len[2];
	bool keyed;
	rpc_reason reason;
	char keys[3][96]; /* the hottest keys, for the event */
	size_t n_keys;
	double rate;      /* units per second consumed */
	bool write;
} ask;

#define MAX_ASKS 16

static int64_t
mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Looks at p once a tick; fills *a and returns true when it should split. */
static bool
look(node *n, part *p, double dt, int64_t now_s, ask *a)
{
	const config *c = &n->cfg;
	bool want = false;

	pthread_mutex_lock(&p->cap_mu);
	heat *ht = &p->heat;
	uint64_t rd = p->rd.charged_half, wr = p->wr.charged_half;
	double r_rate = (double) (rd - ht->seen_rd) / 2 / dt;
	double w_rate = (double) (wr - ht->seen_wr) / 2 / dt;
	bool first = ht->seen_rd == 0 && ht->seen_wr == 0 && ht->hot_s == 0;
	ht->seen_rd = rd;
	ht->seen_wr = wr;
	bool w_hot = w_rate >= c->split_threshold * (double) c->partition_wcu;
	bool r_hot = r_rate >= c->split_threshold * (double) c->partition_rcu;
	if (c->split_after_s > 0 && !first && (w_hot || r_hot))
		ht->hot_s++;
	else
		ht->hot_s = 0;
	decay(ht, now_s);
	if (c->split_after_s > 0 && ht->hot_s >= c->split_after_s &&
	    now_s >= ht->quiet_until_s) {
		/* The dimension further above its share decides. */
		a->write = w_hot && (!r_hot || w_rate / c->partition_wcu >=
		    r_rate / c->partition_rcu);
		a->rate = a->write ? w_rate : r_rate;
		bool item;
		a->keyed = p->lo == p->last;
		if (a->keyed)
			a->n_cuts = heat_key_cuts(ht, p->kfrom, p->kfrom_len,
			    p->kto, p->kto_len, a->write, a->kcut, a->kcut_len,
			    &item);
		else
			a->n_cuts = heat_cuts(ht, p->lo, p->last, a->write,
			    a->cuts, &item);
		a->reason = item ? RPC_REASON_HOT_ITEM : RPC_REASON_HEAT;
		/* The hottest keys, for the event. */
		bool used[HEAT_TOPK] = { false };
		for (a->n_keys = 0; a->n_keys < 3; a->n_keys++) {
			size_t bi = HEAT_TOPK;
			for (size_t i = 0; i < ht->n; i++) {
				uint64_t u = a->write ? ht->top[i].wr :
				    ht->top[i].rd;
				uint64_t bu = bi == HEAT_TOPK ? 0 : (a->write ?
				    ht->top[bi].wr : ht->top[bi].rd);
				if (!used[i] && u > 0 && u > bu)
					bi = i;
			}
			if (bi == HEAT_TOPK)
				break;
			used[bi] = true;
			char t[64];
			heat_key_text(&ht->top[bi], t, sizeof(t));
			uint64_t tot = a->write ? ht->wr : ht->rd;
			uint64_t u = a->write ? ht->top[bi].wr :
			    ht->top[bi].rd;
			snprintf(a->keys[a->n_keys], sizeof(a->keys[0]),
			    "%s (%.1f%%)", t, tot > 0 ?
			    100.0 * (double) u / (double) tot : 0.0);
		}
		want = a->n_cuts > 0;
		ht->hot_s = 0;
		ht->quiet_until_s = now_s + (int64_t) c->split_after_s;
	}
	pthread_mutex_unlock(&p->cap_mu);
	if (!want && c->split_size_bytes > 0 && p->lo < p->last &&
	    now_s >= ht->quiet_until_s) {
		pthread_mutex_lock(&p->mu);
		uint64_t bytes = p->bytes;
		pthread_mutex_unlock(&p->mu);
		if (bytes > c->split_size_bytes) {
			a->reason = RPC_REASON_SIZE;
			a->bytes = bytes;
			a->n_cuts = 0; /* the median, found outside the lock */
			a->n_keys = 0;
			want = true;
			pthread_mutex_lock(&p->cap_mu);
			ht->quiet_until_s = now_s + 5;
			pthread_mutex_unlock(&p->cap_mu);
		}
	}
	if (want) {
		a->table_id = p->table_id;
		a->part = p->id;
		a->epoch = p->epoch;
		a->lo = p->lo;
		a->last = p->last;
	}
	return want;
}

typedef struct median_ctx {
	uint64_t want, seen, h;
	bool found;
} median_ctx;

static bool
median_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	median_ctx *m = arg;
	if (vl >= RECORD_HEADER && keyenc_local_of(k, kl) != -2)
		m->seen += record_size(v);
	if (m->seen * 2 >= m->want && kl >= KEYENC_PREFIX) {
		m->h = keyenc_key_hash(k);
		m->found = true;
		return false;
	}
	return true;
}

/* The cut of a size split: the hash after the one holding the median. */
static bool
median_cut(node *n, ask *a)
{
	uint8_t klo[KEYENC_PREFIX], khi[KEYENC_PREFIX];
	size_t hil;
	median_ctx m = { .want = a->bytes };
	part_range_keys(a->table_id, a->lo, a->last, klo, khi, &hil);
	if (store_scan(n->st, klo, sizeof(klo), khi, hil, median_one, &m) !=
	    KV_OK || !m.found)
		return false;
	uint64_t c = m.h < a->last ? m.h + 1 : m.h;
	if (c <= a->lo)
		return false;
	a->cuts[0] = c;
	a->n_cuts = 1;
	return true;
}

static const char *
reason_name(rpc_reason r)
{
	switch (r) {
	case RPC_REASON_HEAT: return "heat";
	case RPC_REASON_HOT_ITEM: return "hot item";
	case RPC_REASON_SIZE: return "size";
	case RPC_REASON_REBALANCE: return "rebalance";
	default: return "operator";
	}
}

static void
send_ask(node *n, ask *a)
{
	if (a->reason == RPC_REASON_SIZE && !median_cut(n, a))
		return;
	/* A table with local indexes keeps each item collection in one
	 * partition (core/keyenc.h): a hot one stays alone at its hash,
	 * under its partition's ceiling, as in DynamoDB. */
	if (a->keyed && index_has_local(n, a->table_id))
		return;
	const uint8_t *subs[3];
	size_t lens[3];
	for (size_t i = 0; i < a->n_keys; i++) {
		subs[i] = (const uint8_t *) a->keys[i];
		lens[i] = strlen(a->keys[i]);
	}
	rpc_request req = {
		.op = RPC_SPLIT_ASK, .table_id = a->table_id, .part = a->part,
		.epoch = a->epoch, .cuts = a->cuts, .n_cuts = a->n_cuts,
		.reason = a->reason, .subs = subs, .sub_lens = lens,
		.n_subs = a->n_keys,
	};
	if (a->keyed) {
		/* On the sort key: the cuts travel as key bytes. */
		req.cuts = NULL;
		req.n_cuts = 0;
		req.range_lo = a->kcut[0];
		req.range_lo_len = a->kcut_len[0];
		if (a->n_cuts > 1) {
			req.range_hi = a->kcut[1];
			req.range_hi_len = a->kcut_len[1];
		}
	}
	rpc_response resp;
	arena ar;
	kv_err rv;
	arena_init(&ar);
	memset(&resp, 0, sizeof(resp));
	fprintf(stderr, "kv-node %u: partition %u of table %u is hot (%s, "
	    "%.0f %s/s): asking for a split %s %" PRIx64 "%s\n", n->index,
	    a->part, a->table_id, reason_name(a->reason), a->rate,
	    a->write ? "WCU" : "RCU", a->keyed ? "on the sort key in hash" :
	    "at", a->keyed ? a->lo : a->cuts[0], a->n_cuts > 1 ? " and after"
	    : "");
	if (n->index == 0) {
		node_dispatch(n, &req, &ar, &resp);
		rv = resp.code;
	} else {
		rv = cluster_tell(n, 0, &req, &ar, &resp);
		if (rv == KV_OK)
			rv = resp.code;
	}
	wire_response_fini(&resp);
	arena_fini(&ar);
	if (rv != KV_OK && rv != KV_STALE_ROUTE)
		fprintf(stderr, "kv-node %u: split of partition %u of table "
		    "%u refused: %s\n", n->index, a->part, a->table_id,
		    kv_err_name(rv));
	if (rv == KV_IN_USE) {
		/*
		 * A move of the table holds its splits back for a moment:
		 * ask again in a second rather than after a whole
		 * split-after period.
		 */
		pthread_rwlock_rdlock(&n->parts.lock);
		part *p = part_map_find_locked(&n->parts, a->table_id,
		    a->part);
		if (p != NULL) {
			pthread_mutex_lock(&p->cap_mu);
			p->heat.quiet_until_s = heat_now_s() + 1;
			p->heat.hot_s = n->cfg.split_after_s;
			pthread_mutex_unlock(&p->cap_mu);
		}
		pthread_rwlock_unlock(&n->parts.lock);
	}
}

static void
tick(node *n, heat_mon *m)
{
	ask asks[MAX_ASKS];
	size_t n_asks = 0;
	int64_t now = mono_ns();
	double dt = (double) (now - m->last_ns) / 1e9;
	m->last_ns = now;
	if (dt <= 0)
		return;
	int64_t now_s = heat_now_s();
	pthread_rwlock_rdlock(&n->parts.lock);
	for (size_t i = 0; i < n->parts.n; i++) {
		throttle_tick(n, n->parts.p[i], now);
		if (n_asks < MAX_ASKS && look(n, n->parts.p[i], dt, now_s,
		    &asks[n_asks]))
			n_asks++;
	}
	pthread_rwlock_unlock(&n->parts.lock);
	for (size_t i = 0; i < n_asks; i++)
		send_ask(n, &asks[i]);
}

static void *
run(void *arg)
{
	node *n = arg;
	heat_mon *m = n->heat;
	m->last_ns = mono_ns();
	thread_name("kv-heat");
	pthread_mutex_lock(&m->mu);
	while (!m->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&m->cv, &m->mu, &ts);
		if (m->stop)
			break;
		pthread_mutex_unlock(&m->mu);
		tick(n, m);
		pthread_mutex_lock(&m->mu);
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

kv_err
heat_mon_start(node *n)
{
	heat_mon *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return KV_ENOMEM;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	n->heat = m;
	if (pthread_create(&m->th, NULL, run, n) != 0) {
		n->heat = NULL;
		free(m);
		return KV_ENOMEM;
	}
	return KV_OK;
}

void
heat_mon_stop(node *n)
{
	heat_mon *m = n->heat;
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	m->stop = true;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	pthread_join(m->th, NULL);
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->cv);
	free(m);
	n->heat = NULL;
}

/* ---- RPC_HOT_KEYS ---- */

static int
by_weight(const void *a, const void *b)
{
	const heat_key *x = a, *y = b;
	return x->weight > y->weight ? -1 : x->weight < y->weight;
}

void
hot_keys_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	pthread_rwlock_rdlock(&n->parts.lock);
	resp->blobs = arena_alloc(a, (n->parts.n + 1) * sizeof(*resp->blobs));
	resp->blob_lens = arena_alloc(a, (n->parts.n + 1) *
	    sizeof(*resp->blob_lens));
	resp->code = resp->blobs == NULL || resp->blob_lens == NULL ?
	    KV_ENOMEM : KV_OK;
	int64_t now_s = heat_now_s();
	for (size_t i = 0; i < n->parts.n && resp->code == KV_OK; i++) {
		part *p = n->parts.p[i];
		if (req->table_id != 0 && p->table_id != req->table_id)
			continue;
		heat ht;
		pthread_mutex_lock(&p->cap_mu);
		decay(&p->heat, now_s);
		ht = p->heat;
		pthread_mutex_unlock(&p->cap_mu);
		qsort(ht.top, ht.n, sizeof(ht.top[0]), by_weight);
		size_t cap = 512 + ht.n * 256, o = 0;
		char *s = arena_alloc(a, cap);
		if (s == NULL) {
			resp->code = KV_ENOMEM;
			break;
		}
		o += (size_t) snprintf(s + o, cap - o, "{\"table_id\":%u,"
		    "\"part\":%u,\"node\":%u,\"lo\":\"%016" PRIx64 "\","
		    "\"last\":\"%016" PRIx64 "\",\"window_s\":%d,"
		    "\"read_units\":%.1f,\"write_units\":%.1f,"
		    "\"throttled\":%" PRIu64 ",\"keys\":[", p->table_id,
		    p->id, n->index, p->lo, p->last, 2 * HEAT_DECAY_S,
		    (double) ht.rd / 2, (double) ht.wr / 2, ht.throttled);
		for (size_t k = 0; k < ht.n; k++) {
			char t[HEAT_PK_MAX * 2 + 8];
			heat_key_text(&ht.top[k], t, sizeof(t));
			o += (size_t) snprintf(s + o, cap - o, "%s{\"key\":"
			    "\"%s\",\"hash\":\"%016" PRIx64 "\","
			    "\"read_units\":%.1f,\"write_units\":%.1f,"
			    "\"throttled\":%" PRIu64 ",\"error\":%.1f}",
			    k > 0 ? "," : "", t, ht.top[k].h,
			    (double) ht.top[k].rd / 2,
			    (double) ht.top[k].wr / 2, ht.top[k].throttled,
			    (double) ht.top[k].err / 2);
		}
		o += (size_t) snprintf(s + o, cap - o, "]}");
		resp->blobs[resp->n_blobs] = (const uint8_t *) s;
		resp->blob_lens[resp->n_blobs++] = o;
	}
	pthread_rwlock_unlock(&n->parts.lock);
}
