/*
 * throttle.c — per-partition admission and charging (see throttle.h).
 */
#include "throttle.h"

#include <time.h>

#include "bytes.h"
#include "node.h"

int64_t
throttle_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * The rate of one bucket: the ceiling, or the table's provisioned share
 * when lower. Sets *binds when the share is the one that limits.
 */
static int64_t
rate_for(uint64_t ceiling, uint64_t prov, uint32_t parts, bool *binds)
{
	int64_t ceil_r = bucket_rate_micro(ceiling, 1);
	*binds = false;
	if (prov == 0)
		return ceil_r;
	int64_t share = bucket_rate_micro(prov, parts > 0 ? parts : 1);
	if (share < ceil_r) {
		*binds = true;
		return share;
	}
	return ceil_r;
}

/* A wanted rate kept between the share and the ceiling. */
static int64_t
between(int64_t want, uint64_t ceiling, uint64_t prov, uint32_t parts,
    bool *binds)
{
	int64_t share = rate_for(ceiling, prov, parts, binds);
	int64_t ceil_r = bucket_rate_micro(ceiling, 1);
	if (want < share)
		want = share;
	if (want > ceil_r)
		want = ceil_r;
	*binds = want < ceil_r;
	return want;
}

/* A rate of units per second in micro half-units (bucket.h). */
static int64_t
wanted(double units)
{
	return (int64_t) (units * 2 * BUCKET_MICRO);
}

/*
 * Sets p's buckets (starts them when init) to what its state says: the
 * share, or while a lend lasts (borrow_until_ns) its rates kept between
 * the share and the ceiling. Needs cap_mu.
 */
static void
rates_locked(const config *c, part *p, bool init, int64_t now)
{
	int64_t rr, wr;
	if (p->borrow_until_ns != 0) {
		rr = between(p->rd_lent, c->partition_rcu, p->prov_rcu,
		    p->table_parts, &p->rd_prov_binds);
		wr = between(p->wr_lent, c->partition_wcu, p->prov_wcu,
		    p->table_parts, &p->wr_prov_binds);
	} else {
		rr = rate_for(c->partition_rcu, p->prov_rcu, p->table_parts,
		    &p->rd_prov_binds);
		wr = rate_for(c->partition_wcu, p->prov_wcu, p->table_parts,
		    &p->wr_prov_binds);
	}
	if (init) {
		bucket_init(&p->rd, rr, c->burst_seconds, now);
		bucket_init(&p->wr, wr, c->burst_seconds, now);
	} else {
		bucket_set_rate(&p->rd, rr, c->burst_seconds, now);
		bucket_set_rate(&p->wr, wr, c->burst_seconds, now);
	}
}

/*
 * A lend not yet over outlives a new configuration (an ASSIGN of any of
 * the table's partitions reconfigures them all): its rates are kept,
 * between the new share and the ceiling, until it ends. Forgetting it
 * would throttle a borrowing partition at its share until the next round.
 */
void
throttle_configure(node *n, part *p, uint64_t rcu, uint64_t wcu,
    uint32_t table_parts, bool first)
{
	int64_t now = throttle_now_ns();
	pthread_mutex_lock(&p->cap_mu);
	p->prov_rcu = rcu;
	p->prov_wcu = wcu;
	p->table_parts = table_parts;
	if (first || p->borrow_until_ns <= now || (rcu == 0 && wcu == 0))
		p->borrow_until_ns = 0;
	rates_locked(&n->cfg, p, first, now);
	pthread_mutex_unlock(&p->cap_mu);
}

void
throttle_borrow(node *n, part *p, double rd_units, double wr_units,
    int64_t until_ns)
{
	int64_t now = throttle_now_ns();
	pthread_mutex_lock(&p->cap_mu);
	if (p->prov_rcu != 0 || p->prov_wcu != 0) {
		p->rd_lent = wanted(rd_units);
		p->wr_lent = wanted(wr_units);
		p->borrow_until_ns = until_ns;
		rates_locked(&n->cfg, p, false, now);
	}
	pthread_mutex_unlock(&p->cap_mu);
}

void
throttle_tick(node *n, part *p, int64_t now_ns)
{
	pthread_mutex_lock(&p->cap_mu);
	if (p->borrow_until_ns != 0 && now_ns >= p->borrow_until_ns) {
		p->borrow_until_ns = 0;
		rates_locked(&n->cfg, p, false, now_ns);
	}
	pthread_mutex_unlock(&p->cap_mu);
}

kv_err
throttle_admit(node *n, part *p, bool write, const uint8_t *key,
    size_t key_len, rpc_response *resp)
{
	if (n->capacity_off)
		return KV_OK;
	int64_t now = throttle_now_ns();
	pthread_mutex_lock(&p->cap_mu);
	bool ok = bucket_admit(write ? &p->wr : &p->rd, now);
	if (!ok)
		heat_note(&p->heat, key, key_len, write, 0, true,
		    p->lo == p->last, now / 1000000000);
	bool binds = write ? p->wr_prov_binds : p->rd_prov_binds;
	bool prov = p->prov_rcu != 0 || p->prov_wcu != 0;
	pthread_mutex_unlock(&p->cap_mu);
	if (ok)
		return KV_OK;
	resp->throttle = (write ? RPC_THROTTLE_WRITE : 0) |
	    (binds ? RPC_THROTTLE_PROVISIONED : 0) |
	    (prov ? RPC_THROTTLE_TABLE_PROVISIONED : 0);
	return KV_THROTTLED;
}

void
throttle_charge(node *n, part *p, bool write, const uint8_t *key,
    size_t key_len, uint64_t half_units)
{
	if (n->capacity_off)
		return;
	int64_t now = throttle_now_ns();
	pthread_mutex_lock(&p->cap_mu);
	bucket_charge(write ? &p->wr : &p->rd, half_units, now);
	heat_note(&p->heat, key, key_len, write, half_units, false,
	    p->lo == p->last, now / 1000000000);
	pthread_mutex_unlock(&p->cap_mu);
}

void
throttle_stats(part *p, part_stats *s)
{
	int64_t now = throttle_now_ns();
	pthread_mutex_lock(&p->cap_mu);
	s->read_rate = p->rd.rate;
	s->write_rate = p->wr.rate;
	s->read_credit = bucket_credit(&p->rd, now);
	s->write_credit = bucket_credit(&p->wr, now);
	s->read_charged = p->rd.charged_half;
	s->write_charged = p->wr.charged_half;
	s->read_admitted = p->rd.admitted;
	s->write_admitted = p->wr.admitted;
	s->read_throttled = p->rd.throttled;
	s->write_throttled = p->wr.throttled;
	s->prov_rcu = p->prov_rcu;
	s->prov_wcu = p->prov_wcu;
	pthread_mutex_unlock(&p->cap_mu);
}

void
borrow_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	if (req->item_len % RPC_BORROW_ENTRY != 0 || req->max_bytes == 0 ||
	    req->max_bytes > 60000) {
		resp->code = KV_PROTO;
		return;
	}
	int64_t until = throttle_now_ns() + (int64_t) req->max_bytes * 1000000;
	pthread_rwlock_rdlock(&n->parts.lock);
	for (size_t k = 0; k < req->item_len; k += RPC_BORROW_ENTRY) {
		const uint8_t *e = req->item + k;
		uint32_t tid = (uint32_t) bytes_get_le64(e) & 0xffffffffu;
		uint32_t pid = (uint32_t) (bytes_get_le64(e) >> 32);
		part *p = part_map_find_locked(&n->parts, tid, pid);
		if (p != NULL)
			throttle_borrow(n, p, (double) bytes_get_le64(e + 8) / 1e3,
			    (double) bytes_get_le64(e + 16) / 1e3, until);
	}
	pthread_rwlock_unlock(&n->parts.lock);
	resp->code = KV_OK;
}
