/*
 * prepare.c — RPC_TXN_PREPARE: check a transaction's actions on this
 * node, and when all pass, record and lock them (../txn.h).
 *
 * All or nothing on this node: the actions' partitions are locked (their
 * mutexes, in address order) while every action is checked, and the
 * prepared records of all of them go in one batch, which reaches the log
 * with the flush before the answer (server.c). If the process dies
 * before, nothing was prepared here (the coordinator gets no answer and
 * aborts; an item locked meanwhile only turned a writer away); after,
 * the records are read back at start and their transaction is resolved.
 *
 * Each action answers in its own sub-response: KV_OK, KV_COND_FAILED
 * (with the item when asked), KV_TXN_CONFLICT (locked by another
 * transaction, or its partition is moving), KV_THROTTLED, or KV_EINVAL
 * with DynamoDB's message. Every action admitted pays twice its write
 * units (prepare and commit), also when the transaction is cancelled,
 * as DynamoDB charges.
 */
#include "txn_int.h"

#include "capacity.h"
#include "codec.h"
#include "expr_codec.h"
#include "index.h"
#include "item.h"
#include "throttle.h"

/* One action being prepared. */
typedef struct act {
	rpc_request req;
	expr_cond *cond;
	expr_update *upd;
	part *p;
	rpc_response out;
	bool admitted;
	uint8_t *rec;   /* TXN_PUT: the new record (in the arena) */
	size_t rec_len;
	int kind;
	value *old_v, *new_v; /* the item before and after (in the arena) */
	txn_seen seen; /* the item as read, for the commit (txn_int.h) */
} act;

static write_fn
fn_of(rpc_op op)
{
	switch (op) {
	case RPC_PUT: return put_new_item;
	case RPC_DELETE: return delete_new_item;
	case RPC_UPDATE: return update_new_item;
	default: return NULL;
	}
}

static void
fail_with(arena *a, rpc_response *out, kv_err code, const char *msg)
{
	out->code = code;
	out->message = arena_dup(a, msg, strlen(msg));
}

/*
 * Whether writing new_v over old_v (NULL: none) would grow the item's
 * collection past its limit, in a table with local indexes (view: the
 * node's catalog, read-locked; NULL: not known, not checked).
 */
static bool
collection_full(node *n, const catalog *view, act *x,
    const value *old_v, const value *new_v, arena *a)
{
	const table *t = view != NULL ? table_find_id(view, x->req.table_id) :
	    NULL;
	uint64_t coll;
	store_batch scratch;
	if (t == NULL || !table_has_local(t) || (old_v == NULL && new_v == NULL))
		return false;
	store_batch_init(&scratch);
	kv_err rv = index_local_write(n, t, old_v, new_v, a, &scratch, NULL,
	    NULL, &coll);
	store_batch_fini(&scratch);
	/* The size the collection will have: ItemCollectionMetrics. */
	x->out.has_coll = rv == KV_OK;
	x->out.coll_size = coll;
	return rv == KV_COLL_FULL;
}

/*
 * Whether writing new_v over old_v would change a global index whose
 * owners cannot take its writes (index_pressed): the action is then
 * throttled, as a single write to the table is (write.c), with the
 * index's name in its message for the router (view: the node's catalog,
 * read-locked; NULL: not known, not checked).
 */
static bool
index_short(node *n, const catalog *view, act *x, const value *old_v,
    const value *new_v, arena *a)
{
	const table *t = view != NULL ? table_find_id(view, x->req.table_id) :
	    NULL;
	if (t == NULL || !index_table_indexed(t) || !index_table_pressed(n, t))
		return false; /* nearly always: no projection worked out */
	index_units *u = arena_alloc(a, (t->n_indexes + 1) * sizeof(*u));
	size_t nu = 0;
	uint32_t iid, bits;
	if (u == NULL || index_outbox(n, t, 0, old_v, new_v, a, NULL, u,
	    &nu) != KV_OK || !index_units_pressed(n, u, nu, &iid, &bits))
		return false;
	x->out.code = KV_THROTTLED;
	x->out.throttle = bits | RPC_THROTTLE_INDEX;
	x->out.message = index_name_of_locked(n, iid, a);
	return true;
}

/* Checks action x (its partition's mutex held): fills x->out. */
static void
check_one(node *n, const catalog *view, act *x, arena *a)
{
	txn_state *s = n->txn;
	rpc_response *out = &x->out;
	uint8_t *old = NULL;
	size_t ol = 0;
	bool found = false;
	value old_item, *old_v = NULL, *new_v = NULL;

	out->code = KV_OK;
	pthread_mutex_lock(&s->mu);
	bool locked = txn_is_locked(s, x->req.key, x->req.key_len);
	pthread_mutex_unlock(&s->mu);
	if (locked || x->p->move_id != 0) {
		fail_with(a, out, KV_TXN_CONFLICT,
		    "Transaction is ongoing for the item.");
		return;
	}
	if ((out->code = throttle_admit(n, x->p, true, x->req.key,
	    x->req.key_len, out)) != KV_OK)
		return;
	x->admitted = true;
	x->seen.valid = store_stamp_take(n->st, x->req.key, x->req.key_len,
	    &x->seen.item_stamp);
	if ((out->code = store_get(n->st, x->req.key, x->req.key_len, &old,
	    &ol, &found)) != KV_OK)
		return;
	if (found) {
		/* Decoded values borrow their bytes: keep them in a. */
		uint8_t *keep = ol >= RECORD_HEADER ?
		    (uint8_t *) arena_dup(a, (char *) old, ol) : NULL;
		free(old);
		if (keep == NULL || codec_decode(a, keep + RECORD_HEADER,
		    ol - RECORD_HEADER, &old_item) != KV_OK ||
		    old_item.type != VAL_M) {
			out->code = keep == NULL && ol >= RECORD_HEADER ?
			    KV_ENOMEM : KV_CORRUPT;
			return;
		}
		old_v = &old_item;
		out->old_size = record_size(keep);
		x->seen.old = keep;
		x->seen.ol = ol;
	}
	if (x->cond != NULL && !expr_eval_condition(x->cond, old_v)) {
		out->code = KV_COND_FAILED;
		if (x->req.return_on_failure && old_v != NULL) {
			size_t cl = codec_size(old_v);
			uint8_t *buf = arena_alloc(a, cl > 0 ? cl : 1);
			if (buf == NULL) {
				out->code = KV_ENOMEM;
				return;
			}
			codec_write(old_v, buf);
			out->found = true;
			out->item = buf;
			out->item_len = cl;
		}
		return;
	}
	if (x->req.op == RPC_CHECK) {
		x->kind = TXN_CHECK;
		return;
	}
	expr_err err;
	err.msg[0] = '\0';
	out->code = fn_of(x->req.op)(&x->req, x->upd, a, old_v, &new_v, &err);
	if (out->code != KV_OK) {
		if (err.msg[0] != '\0')
			fail_with(a, out, out->code, err.msg);
		return;
	}
	if (old_v != NULL && (x->old_v = arena_alloc(a, sizeof(value))) !=
	    NULL)
		*x->old_v = *old_v;
	x->new_v = new_v;
	if (old_v != NULL && x->old_v == NULL) {
		out->code = KV_ENOMEM;
		return;
	}
	if (collection_full(n, view, x, old_v, new_v, a)) {
		fail_with(a, out, KV_COLL_FULL, "Collection size exceeded.");
		return;
	}
	if (new_v == NULL) {
		if (!index_short(n, view, x, old_v, new_v, a))
			x->kind = TXN_DELETE;
		return;
	}
	size_t size = item_size(new_v);
	out->new_size = (uint32_t) size;
	if (size > ITEM_MAX_SIZE) {
		fail_with(a, out, KV_EINVAL, x->upd != NULL ?
		    "Item size to update has exceeded the maximum allowed size" :
		    "Item size has exceeded the maximum allowed size");
		return;
	}
	/* An index key of the wrong type, empty or too long: a
	 * ValidationError, as a single write's ValidationException. */
	const table *t = view != NULL ? table_find_id(view, x->req.table_id) :
	    NULL;
	char msg[512];
	if (t != NULL && index_table_indexed(t) &&
	    !index_check(t, new_v, msg, sizeof(msg))) {
		fail_with(a, out, KV_EINVAL, msg);
		return;
	}
	if (index_short(n, view, x, old_v, new_v, a))
		return;
	x->rec_len = RECORD_HEADER + codec_size(new_v);
	if ((x->rec = arena_alloc(a, x->rec_len)) == NULL) {
		out->code = KV_ENOMEM;
		return;
	}
	bytes_put_le32(x->rec, (uint32_t) size);
	codec_write(new_v, x->rec + RECORD_HEADER);
	x->kind = TXN_PUT;
}

/*
 * The keeper's actions, when the others prepared: the outcome COMMIT
 * and the writes of all its actions (with their index records; its[i]:
 * action i's table when it has indexes) go in one batch, under keep_mu
 * and the partitions' mutexes (held since the checks), so there is
 * nothing to prepare or lock here: if the process dies before the batch
 * is in the log, neither is there and the others abort; after, both
 * are. A RESOLVE that came first (ABORT recorded) leaves the items
 * alone. The outcome in *outcome.
 */
static kv_err
commit_now(node *n, uint64_t txn, const act *xs, size_t nx,
    const table *const *its, arena *a, uint32_t *outcome)
{
	txn_state *s = n->txn;
	store_batch b;
	size_t nc = 0;
	write_change *cs = arena_alloc(a, (nx + 1) * sizeof(*cs));
	if (cs == NULL)
		return KV_ENOMEM;
	store_batch_init(&b);
	pthread_mutex_lock(&s->keep_mu);
	kv_err rv = txn_decide_add(n, txn, RPC_TXN_COMMIT, a, &b, outcome);
	bool now = rv == KV_OK && b.n > 0 && *outcome == RPC_TXN_COMMIT;
	for (size_t i = 0; now && i < nx; i++) {
		const act *x = &xs[i];
		if (x->kind == TXN_CHECK ||
		    (x->old_v == NULL && x->new_v == NULL))
			continue; /* a check, or deleting a missing item */
		if (plant_fire(&n->plant, PLANT_TXN_HALF)) {
			fprintf(stderr, "kv-node %u: PLANTED FAULT: a "
			    "committed action dropped\n", n->index);
			continue;
		}
		cs[nc++] = (write_change) { .p = x->p, .t = its[i],
			.key = x->req.key, .key_len = x->req.key_len,
			.old_v = x->old_v, .old_size = x->out.old_size,
			.new_v = x->new_v, .rec = x->rec,
			.rec_len = x->rec_len };
	}
	/*
	 * write_commits leaves the batch's log record to the next flush:
	 * whoever learns the outcome learns it from an answer, and every
	 * answer (the request server's, a peer's: cluster.c) is sent after
	 * a flush of the whole log, so no participant commits on an
	 * outcome a crash could still take back. (A keeper's own
	 * participants would ask it without an answer, but it has none:
	 * its actions are all here.)
	 */
	if (now && nc > 0)
		rv = write_commits(n, cs, nc, a, &b);
	else if (now)
		rv = store_write(n->st, &b); /* the outcome alone */
	pthread_mutex_unlock(&s->keep_mu);
	store_batch_fini(&b);
	return rv;
}

/*
 * Adds x's prepared record (action number seq of req's transaction); the
 * record, as txn_add_locked takes it, in *rec (in a) and *vlp.
 */
static kv_err
add_record(const rpc_request *req, const act *x, uint16_t seq, arena *a,
    store_batch *b, uint8_t **rec, size_t *vlp)
{
	size_t vl = TXN_HEAD + x->req.key_len + (x->kind == TXN_PUT ?
	    x->rec_len : 0);
	uint8_t *k = arena_alloc(a, TXN_KEY_LEN + vl);
	if (k == NULL)
		return KV_ENOMEM;
	uint8_t *v = k + TXN_KEY_LEN;
	*rec = k;
	*vlp = vl;
	txn_key(req->txn, seq, k);
	bytes_put_le32(v, req->node);
	bytes_put_le32(v + 4, x->req.table_id);
	v[8] = (uint8_t) x->kind;
	bytes_put_le32(v + 9, (uint32_t) x->req.key_len);
	memcpy(v + TXN_HEAD, x->req.key, x->req.key_len);
	if (x->kind == TXN_PUT)
		memcpy(v + TXN_HEAD + x->req.key_len, x->rec, x->rec_len);
	return store_batch_add(b, STORE_PUT, k, TXN_KEY_LEN, v, vl);
}

/* Reads the actions of req into xs; false (resp->code set) if malformed. */
static bool
read_actions(const rpc_request *req, arena *a, act *xs, rpc_response *resp)
{
	for (size_t i = 0; i < req->n_subs; i++) {
		act *x = &xs[i];
		memset(x, 0, sizeof(*x));
		if (wire_unpack_request(req->subs[i], req->sub_lens[i], a,
		    &x->req) != KV_OK || (x->req.op != RPC_PUT &&
		    x->req.op != RPC_DELETE && x->req.op != RPC_UPDATE &&
		    x->req.op != RPC_CHECK) ||
		    (x->req.condition != NULL && expr_codec_decode_cond(a,
		    x->req.condition, x->req.condition_len, &x->cond) !=
		    KV_OK) ||
		    (x->req.update != NULL && expr_codec_decode_update(a,
		    x->req.update, x->req.update_len, &x->upd) != KV_OK)) {
			resp->code = KV_PROTO;
			return false;
		}
		for (size_t j = 0; j < i; j++)
			if (xs[j].req.key_len == x->req.key_len &&
			    memcmp(xs[j].req.key, x->req.key,
			    x->req.key_len) == 0) {
				resp->code = KV_PROTO; /* the router refuses it */
				return false;
			}
	}
	return true;
}

/* Packs each action's answer into resp->subs. */
static void
answer(const act *xs, size_t nx, arena *a, rpc_response *resp)
{
	resp->subs = arena_alloc(a, (nx + 1) * sizeof(*resp->subs));
	resp->sub_lens = arena_alloc(a, (nx + 1) * sizeof(*resp->sub_lens));
	if (resp->subs == NULL || resp->sub_lens == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	for (size_t i = 0; i < nx; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		if (wire_pack_response(&xs[i].out, &buf, &len) != KV_OK) {
			resp->code = KV_ENOMEM;
			return;
		}
		resp->subs[i] = (const uint8_t *) arena_dup(a, (char *) buf,
		    len > 0 ? len : 1);
		resp->sub_lens[i] = len;
		free(buf);
		if (resp->subs[i] == NULL) {
			resp->code = KV_ENOMEM;
			return;
		}
	}
	resp->n_subs = nx;
}

void
txn_prepare_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	txn_state *s = n->txn;
	size_t nx = req->n_subs, np = 0;
	bool ok = false;
	act *xs = arena_alloc(a, (nx + 1) * sizeof(*xs));
	part **ps = arena_alloc(a, (nx + 1) * sizeof(*ps));
	store_batch b;

	if (xs == NULL || ps == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	if (s == NULL || req->txn == 0 || nx == 0 || nx > RPC_MULTI_MAX ||
	    req->node >= n->cfg.n_nodes || (req->limit == RPC_TXN_COMMIT &&
	    req->node != n->index)) {
		resp->code = KV_PROTO;
		return;
	}
	if (!read_actions(req, a, xs, resp))
		return;
	pthread_mutex_lock(&s->mu);
	bool again = txn_find_locked(s, req->txn) != NULL;
	pthread_mutex_unlock(&s->mu);
	if (again) {
		/* Prepared already (a repeat): the same answer. */
		for (size_t i = 0; i < nx; i++)
			wire_request_fini(&xs[i].req);
		resp->code = KV_OK;
		answer(xs, nx, a, resp);
		return;
	}
	store_batch_init(&b);
	/* The view before the map's lock, as writes take them. */
	const catalog *view = index_view_lock(n);
	/*
	 * The keeper's actions commit at once (commit_now) when the view
	 * knows their tables' indexes, unless there are several and one is
	 * of a table with local indexes (write_commits): those are prepared
	 * and then committed one by one, as the others' are.
	 */
	uint32_t outcome = 0;
	const table **its = arena_alloc(a, (nx + 1) * sizeof(*its));
	if (its == NULL) {
		resp->code = KV_ENOMEM;
		goto unview;
	}
	/*
	 * A view that cannot tell an action's table's indexes (none yet, or
	 * older than the table's last ASSIGN) could not check the item's
	 * index keys, nor the collection's size: as a write, the prepare
	 * waits for it (STALE_ROUTE: the router starts over).
	 */
	for (size_t i = 0; i < nx; i++)
		if (!index_view_known(n, xs[i].req.table_id, &its[i])) {
			resp->code = KV_STALE_ROUTE;
			goto unview;
		}
	bool now = req->limit == RPC_TXN_COMMIT;
	for (size_t i = 0; now && i < nx; i++)
		now = nx == 1 || its[i] == NULL || !table_has_local(its[i]);
	pthread_rwlock_rdlock(&n->parts.lock);
	resp->code = KV_OK;
	for (size_t i = 0; i < nx && resp->code == KV_OK; i++) {
		resp->code = part_map_check_key_locked(&n->parts,
		    xs[i].req.table_id, xs[i].req.part, xs[i].req.epoch,
		    xs[i].req.key, xs[i].req.key_len, &xs[i].p);
		if (resp->code == KV_OK)
			ps[np++] = xs[i].p;
	}
	if (resp->code != KV_OK)
		goto unlock_map; /* a stale route: nothing prepared */
	part_lock_set(ps, &np);
	ok = true;
	for (size_t i = 0; i < nx; i++) {
		check_one(n, view, &xs[i], a);
		ok = ok && xs[i].out.code == KV_OK;
	}
	if (ok && now) {
		resp->code = commit_now(n, req->txn, xs, nx, its, a,
		    &outcome);
		ok = false; /* nothing prepared to record or lock */
	}
	uint8_t **recs = ok ? arena_alloc(a, (nx + 1) * sizeof(*recs)) : NULL;
	size_t *vls = ok ? arena_alloc(a, (nx + 1) * sizeof(*vls)) : NULL;
	if (ok && (recs == NULL || vls == NULL))
		resp->code = KV_ENOMEM;
	for (size_t i = 0; ok && i < nx && resp->code == KV_OK; i++)
		resp->code = add_record(req, &xs[i], (uint16_t) i, a, &b,
		    &recs[i], &vls[i]);
	/* In the log with the answer's flush (server.c), as a write's. */
	if (ok && resp->code == KV_OK)
		resp->code = store_write_buffered(n->st, &b);
	if (ok && resp->code == KV_OK) {
		txn_seen *seen = arena_alloc(a, nx * sizeof(*seen));
		for (size_t i = 0; seen != NULL && i < nx; i++) {
			seen[i] = xs[i].seen;
			seen[i].valid = seen[i].valid && store_stamp_take(n->st,
			    recs[i], TXN_KEY_LEN, &seen[i].rec_stamp);
		}
		pthread_mutex_lock(&s->mu);
		resp->code = txn_add_locked(s, req->txn, req->node, recs, vls,
		    seen, nx);
		pthread_mutex_unlock(&s->mu);
		if (resp->code != KV_OK) {
			/* Recorded but not locked: take the records back. */
			uint8_t lo[TXN_KEY_LEN], hi[TXN_KEY_LEN];
			txn_key(req->txn, 0, lo);
			txn_key(req->txn + 1, 0, hi);
			store_batch_fini(&b);
			store_batch_init(&b);
			if (store_batch_add(&b, STORE_DELETE_RANGE, lo,
			    sizeof(lo), hi, sizeof(hi)) == KV_OK)
				(void) store_write(n->st, &b);
		}
	}
	part_unlock_set(ps, np);
	/* Twice the write units: prepare and commit (DynamoDB). */
	for (size_t i = 0; i < nx; i++)
		if (xs[i].admitted)
			throttle_charge(n, xs[i].p, true, xs[i].req.key,
			    xs[i].req.key_len, 4 * capacity_write_units(
			    xs[i].out.old_size, xs[i].out.new_size));
unlock_map:
	pthread_rwlock_unlock(&n->parts.lock);
unview:
	if (n->gsi != NULL)
		index_view_unlock(n);
	store_batch_fini(&b);
	for (size_t i = 0; i < nx; i++)
		wire_request_fini(&xs[i].req);
	if (resp->code == KV_OK)
		answer(xs, nx, a, resp);
	/*
	 * The keeper, last (every other participant prepared), with actions
	 * commit_now could not write at once (several, one of a table with
	 * local indexes): they are prepared, then the outcome is decided here
	 * and now and this node's share committed, which saves the
	 * coordinator two calls; all of one node, one call.
	 */
	if (resp->code == KV_OK && ok && req->limit == RPC_TXN_COMMIT) {
		resp->code = txn_decide(n, req->txn, RPC_TXN_COMMIT, &outcome);
		if (resp->code == KV_OK)
			resp->code = txn_finish(n, req->txn,
			    outcome == RPC_TXN_COMMIT);
	}
	resp->seq = outcome;
}
