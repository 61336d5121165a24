/*
 * stats.c — RPC_STATS: item counts and sizes of this node's partitions of
 * one table (table_id 0: of every table), with their capacity counters,
 * for DescribeTable, kv-admin status and the routers' /metrics.
 *
 * Asked for one table with local secondary indexes (DescribeTable), each
 * partition also gives the entries of each local index and their
 * projected sizes (the index's ItemCount and IndexSizeBytes). The writes
 * do not keep these: they are counted by scans of the partition, begun
 * only once a hundred times the last count's scanning time has passed
 * since it ended, so that counting takes at most about a hundredth of the
 * time. One request scans for at most COUNT_BUDGET_US in all (it holds
 * the map's lock shared meanwhile, which an ASSIGN waits for); a count
 * that is not done stops at a key, and the next request goes on from
 * there. Until it ends, the last finished count is given. A count reads
 * the store as it is while writes go on, so it is as of about its time;
 * DynamoDB itself refreshes an index's ItemCount and IndexSizeBytes only
 * about every six hours.
 */
#include "node.h"
#include "clock.h"
#include "index.h"
#include "keyenc.h"
#include "throttle.h"

#include <stdlib.h>
#include <string.h>

#if PART_LOCAL_MAX != WIRE_LOCAL_MAX
#error "a partition counts as many local indexes as the wire carries"
#endif

#ifndef COUNT_BUDGET_US
#define COUNT_BUDGET_US 50000 /* of scanning, per request */
#endif
#ifndef COUNT_CHECK
#define COUNT_CHECK 256 /* keys between looks at the clock */
#endif

typedef struct tally {
	uint64_t items[PART_LOCAL_MAX], bytes[PART_LOCAL_MAX];
	int64_t deadline_us;
	size_t seen;
	uint8_t *stop;  /* the key it stopped after (owned); NULL: the end */
	size_t stop_len;
	bool nomem;
} tally;

static bool
tally_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	tally *t = arg;
	int i = keyenc_local_of(k, kl);
	if (i >= 0 && i < PART_LOCAL_MAX && vl >= RECORD_HEADER) {
		t->items[i]++;
		t->bytes[i] += record_size(v);
	}
	if (++t->seen % COUNT_CHECK != 0 || clock_mono_us() < t->deadline_us)
		return true;
	/* Out of time: the next request goes on after this key. */
	t->stop = store_key_after(k, kl, &t->stop_len);
	t->nomem = t->stop == NULL;
	return false;
}

/*
 * Counts p's local index entries if a count is due or under way, until
 * *budget_us of scanning is spent. The map's lock is held shared (so p
 * and its range stay). p->local is guarded by p's mutex, which the scan
 * does without: `busy` keeps a second request off the same count, and
 * the writes to p go on meanwhile.
 */
static void
count_local(node *n, part *p, int64_t *budget_us)
{
	local_count *c = &p->local;
	tally t;
	memset(&t, 0, sizeof(t));
	pthread_mutex_lock(&p->mu);
	int64_t t0 = clock_mono_us();
	if (!c->busy && c->epoch != p->epoch) {
		/* Split or moved since: a run under way counted another
		 * range, and the last count is due again. */
		free(c->from);
		c->from = NULL;
		c->at_us = 0;
		c->epoch = p->epoch;
	}
	if (*budget_us <= 0 || c->busy || (c->from == NULL && c->at_us != 0 &&
	    t0 - c->at_us < 100 * c->took_us)) {
		pthread_mutex_unlock(&p->mu);
		return;
	}
	uint8_t *from = c->from;
	size_t from_len = c->from_len;
	if (from == NULL) { /* a new count */
		memset(c->run_items, 0, sizeof(c->run_items));
		memset(c->run_bytes, 0, sizeof(c->run_bytes));
		c->run_us = 0;
	}
	c->from = NULL;
	c->busy = true;
	uint8_t lo[PART_BOUND_MAX], hi[PART_BOUND_MAX];
	size_t lol, hil;
	part_bounds(p, lo, &lol, hi, &hil);
	pthread_mutex_unlock(&p->mu);

	t.deadline_us = t0 + *budget_us;
	kv_err rv = store_scan(n->st, from != NULL ? from : lo,
	    from != NULL ? from_len : lol, hi, hil, tally_one, &t);
	free(from);
	int64_t t1 = clock_mono_us();
	*budget_us -= t1 - t0;

	pthread_mutex_lock(&p->mu);
	c->busy = false;
	if (rv != KV_OK || t.nomem) {
		free(t.stop); /* this count is lost; the last one stands */
		pthread_mutex_unlock(&p->mu);
		return;
	}
	for (int i = 0; i < PART_LOCAL_MAX; i++) {
		c->run_items[i] += t.items[i];
		c->run_bytes[i] += t.bytes[i];
	}
	c->run_us += t1 - t0 > 0 ? t1 - t0 : 1;
	if (t.stop != NULL) {
		c->from = t.stop;
		c->from_len = t.stop_len;
	} else {
		memcpy(c->items, c->run_items, sizeof(c->items));
		memcpy(c->bytes, c->run_bytes, sizeof(c->bytes));
		c->at_us = t1;
		c->took_us = c->run_us;
	}
	pthread_mutex_unlock(&p->mu);
}

void
stats_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	bool local = req->table_id != 0 && index_has_local(n, req->table_id);
	int64_t budget = COUNT_BUDGET_US;
	pthread_rwlock_rdlock(&n->parts.lock);
	resp->stats = arena_alloc(a, (n->parts.n + 1) * sizeof(part_stats));
	if (resp->stats == NULL) {
		resp->code = KV_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n->parts.n; i++) {
		part *p = n->parts.p[i];
		if (req->table_id != 0 && p->table_id != req->table_id)
			continue;
		if (local)
			count_local(n, p, &budget);
		part_stats *s = &resp->stats[resp->n_stats++];
		pthread_mutex_lock(&p->mu);
		*s = (part_stats) {
			.table_id = p->table_id, .part = p->id,
			.epoch = p->epoch, .items = p->items,
			.bytes = p->bytes,
		};
		if (local) {
			s->n_local = PART_LOCAL_MAX;
			memcpy(s->local_items, p->local.items,
			    sizeof(p->local.items));
			memcpy(s->local_bytes, p->local.bytes,
			    sizeof(p->local.bytes));
		}
		pthread_mutex_unlock(&p->mu);
		throttle_stats(p, s);
	}
	resp->code = KV_OK;
out:
	pthread_rwlock_unlock(&n->parts.lock);
}
