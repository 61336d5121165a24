/*
 * ops_batch.c — BatchGetItem and BatchWriteItem.
 *
 * The whole request is checked first (shapes, limits, tables, key
 * schemas, duplicate keys), so a bad request changes nothing. A batch is
 * not atomic: an item whose node cannot be reached, or whose partition
 * throttled it, comes back in UnprocessedItems / UnprocessedKeys for the
 * client to retry, while the rest are applied.
 *
 * The items are routed first and grouped by owner node; each node's
 * group goes out as one MULTI message (node/multi.c), one worker thread
 * per node with its own arena, so a 25-item batch costs at most one round
 * trip per node instead of one per item. Each worker fills the result
 * slots of its own items, which the request's thread assembles after
 * joining them (slots are written by one worker and read after
 * pthread_join, so they need no lock). Items whose partition moved
 * (STALE_ROUTE) are then sent one by one, refreshing and retrying.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "capacity.h"
#include "conn.h"
#include "codec.h"
#include "errors.h"
#include "item.h"
#include "json.h"
#include "ops_item.h"
#include "request.h"
#include "request_expr.h"
#include "route.h"
#include "thread_name.h"

#define BATCH_WRITE_MAX 25
#define BATCH_GET_MAX 100
#define BATCH_GET_BYTES (16u * 1024 * 1024)
#define BATCH_THREADS 8

/* One request of a batch, parsed. */
typedef struct entry {
	const char *table;
	json_t *src;          /* the request's own JSON, for Unprocessed* */
	value v;              /* the item (put) or the key */
	bool put;
	const value *pk, *sk; /* its key, once checked */
} entry;

static bool
from_json_error(reply *out, const json_error *e)
{
	errors_reply(out, e->kind == JSON_ERR_SERIALIZATION ?
	    ERR_SERIALIZATION : ERR_VALIDATION, "%s", e->msg);
	return false;
}

/*
 * The key of a batch put. A missing or mistyped key attribute gets the
 * key-schema message here (PutItem words it differently); empty and
 * oversized keys get req_item_key's messages.
 */
static bool
put_key(const table *t, entry *e, reply *out)
{
	const key_def *defs[2] = { &t->hash, &t->range };
	for (int i = 0; i < 2; i++) {
		if (defs[i]->name == NULL)
			continue;
		const value *v = item_attr(&e->v, defs[i]->name,
		    strlen(defs[i]->name));
		if (v == NULL || v->type != defs[i]->type) {
			errors_reply(out, ERR_VALIDATION, "The provided key "
			    "element does not match the schema");
			return false;
		}
	}
	return req_item_key(t, &e->v, &e->pk, &e->sk, out);
}

/* Checks tables, key schemas and duplicates of entries[0..n). */
static bool
check_entries(api_ctx *c, entry *es, size_t n, reply *out)
{
	bool refreshed = false;
again:
	route_read_lock();
	for (size_t i = 0; i < n; i++) {
		const table *t = catalog_find(route_current(c->r), es[i].table,
		    strlen(es[i].table));
		if (t == NULL || !table_serving(t)) {
			route_read_unlock();
			if (!refreshed) {
				refreshed = true;
				route_refresh(c->r);
				goto again;
			}
			req_table_missing(out);
			return false;
		}
		bool ok = es[i].put ? put_key(t, &es[i], out) :
		    req_key(t, &es[i].v, &es[i].pk, &es[i].sk, out);
		if (!ok) {
			route_read_unlock();
			return false;
		}
	}
	route_read_unlock();
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(es[i].table, es[k].table) == 0 &&
			    value_equal(es[i].pk, es[k].pk) &&
			    (es[i].sk == NULL || value_equal(es[i].sk,
			    es[k].sk))) {
				errors_reply(out, ERR_VALIDATION, "Provided list "
				    "of item keys contains duplicates");
				return false;
			}
	return true;
}

/* ReturnConsumedCapacity and RequestItems (which must be there). */
static bool
read_request_items(json_t *body, const char **mode, json_t **items,
    reply *out)
{
	if (!req_capacity(body, mode, out) ||
	    !req_object(body, "RequestItems", items, out))
		return false;
	if (*items == NULL) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value null at 'requestItems' failed to satisfy constraint: "
		    "Member must not be null");
		return false;
	}
	return true;
}

#define SLOT_INDEXES 25 /* DynamoDB's most GSIs and LSIs per table */

/* What became of one item of a batch. */
typedef struct slot {
	reply fail;    /* status 0: applied or read */
	uint64_t half; /* capacity charged, in half units */
	/* BatchWriteItem: what the write cost each global index (by the
	 * index's table id; a table has at most SLOT_INDEXES). */
	uint32_t iids[SLOT_INDEXES];
	uint64_t ihalf[SLOT_INDEXES];
	size_t n_ix;
	bool has_coll;  /* BatchWriteItem: the size of the item's */
	uint64_t coll;  /* collection (a table with local indexes) */
	json_t *item;  /* BatchGetItem: the item found, projected */
	size_t bytes;  /* BatchGetItem: its size on the wire */
	bool throttled; /* fail is a throttle answer: return it unprocessed */
} slot;

/* Adds `half` units at key name of object o. */
static void
add_units(json_t *o, const char *name, uint64_t half)
{
	json_t *e = json_object_get(o, name);
	json_int_t prev = e != NULL ? json_integer_value(e) : 0;
	json_object_set_new(o, name, json_integer(prev + (json_int_t) half));
}

/*
 * Adds `half` units for table name to the per-table list in cc, and
 * what it cost each of its global indexes (the slot's, if any) to
 * cc's "indexes" member, per table and index.
 */
static void
charge(api_ctx *c, json_t *cc, const char *name, uint64_t half,
    const slot *sl)
{
	json_t *tables = json_object_get(cc, "tables");
	add_units(tables, name, half);
	if (sl == NULL || sl->n_ix == 0)
		return;
	route_read_lock();
	for (size_t i = 0; i < sl->n_ix; i++) {
		bool local;
		const char *iname = ops_index_name(c, name, sl->iids[i],
		    &local);
		if (iname == NULL)
			continue;
		json_t *ix = json_object_get(cc, local ? "locals" : "indexes");
		json_t *t = json_object_get(ix, name);
		if (t == NULL) {
			t = json_object();
			json_object_set_new(ix, name, t);
		}
		add_units(t, iname, sl->ihalf[i]);
	}
	route_read_unlock();
}

/* The per-table charges, to be filled by charge(). */
static json_t *
charges_new(void)
{
	return json_pack("{s:o,s:o,s:o}", "tables", json_object(), "indexes",
	    json_object(), "locals", json_object());
}

/*
 * Renders the per-table charges as DynamoDB's ConsumedCapacity list:
 * a table's index writes count in its total, and INDEXES names them.
 */
static void
consumed_list(json_t *j, const char *mode, json_t *cc)
{
	const char *name, *iname;
	json_t *v, *iv;
	if (mode == NULL)
		return;
	json_t *list = json_array();
	json_object_foreach(json_object_get(cc, "tables"), name, v) {
		json_t *ix[2] = {
			json_object_get(json_object_get(cc, "indexes"), name),
			json_object_get(json_object_get(cc, "locals"), name),
		};
		size_t n = 0, k = json_object_size(ix[0]) +
		    json_object_size(ix[1]);
		const char **names = calloc(k + 1, sizeof(*names));
		uint64_t *ihalf = calloc(k + 1, sizeof(*ihalf));
		bool *local = calloc(k + 1, sizeof(*local));
		for (int l = 0; l < 2 && names != NULL && ihalf != NULL &&
		    local != NULL; l++) {
			json_object_foreach(ix[l], iname, iv) {
				names[n] = iname;
				local[n] = l == 1;
				ihalf[n++] = (uint64_t) json_integer_value(iv);
			}
		}
		json_array_append_new(list, req_consumed_object(mode, name,
		    (uint64_t) json_integer_value(v), names, ihalf, local,
		    n));
		free(names);
		free(ihalf);
		free(local);
	}
	json_object_set_new(j, "ConsumedCapacity", list);
}

static json_t *
list_for(json_t *map, const char *table)
{
	json_t *l = json_object_get(map, table);
	if (l == NULL) {
		l = json_array();
		json_object_set_new(map, table, l);
	}
	return l;
}

/* One table's part of a BatchGetItem. */
typedef struct get_table {
	const char *name;
	json_t *src;     /* its KeysAndAttributes, for UnprocessedKeys */
	req_exprs x;
	bool consistent;
} get_table;


/*
 * Whether an item's failure goes back to the client as unprocessed (not
 * applied, or not known to be; throttled) rather than failing the batch.
 */
static bool
retry_later(const slot *sl)
{
	return sl->throttled || sl->fail.status >= 500;
}

/*
 * DynamoDB fails a batch with the throttling error only when every one of
 * its items was throttled; otherwise the throttled ones come back
 * unprocessed. Returns the reply to send, or NULL.
 */
static reply *
all_throttled(slot *slots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!slots[i].throttled)
			return NULL;
	return n > 0 ? &slots[0].fail : NULL;
}

typedef struct batch_job {
	api_ctx *c;
	entry *es;
	slot *slots;
	size_t n;
	const get_table *ts; /* BatchGetItem: tables; NULL for writes */
	const size_t *owner; /* BatchGetItem: entry -> table */
	item_op *ops;        /* each entry's request, routed */
	uint32_t *node;      /* each entry's owner; UINT32_MAX: settled */
	bool *again;         /* sent in a group, answered STALE_ROUTE */
	atomic_size_t next;  /* the next node for a worker to take */
} batch_job;

/* The item_op of entry i: its verb, table and key or item. */
static item_op
entry_op(const batch_job *b, size_t i)
{
	const entry *e = &b->es[i];
	const get_table *g = b->ts != NULL ? &b->ts[b->owner[i]] : NULL;
	return (item_op) { .table = e->table, .v = &e->v, .is_item = e->put,
		.req = { .op = g != NULL ? RPC_GET : e->put ? RPC_PUT :
		RPC_DELETE, .consistent = g != NULL && g->consistent } };
}

/* Books the node's answer to entry i (capacity, the item read). */
static void
finish(batch_job *b, api_ctx *wc, size_t i, const rpc_response *resp)
{
	slot *sl = &b->slots[i];
	const get_table *g = b->ts != NULL ? &b->ts[b->owner[i]] : NULL;
	if (g == NULL) {
		sl->half = 2 * capacity_write_units(resp->old_size,
		    resp->new_size);
		sl->has_coll = resp->has_coll;
		sl->coll = resp->coll_size;
		/* Copied: the worker's arena goes before the answer is
		 * written; the names are looked up then. */
		sl->n_ix = 0;
		for (size_t k = 0; k < resp->n_blobs && sl->n_ix <
		    SLOT_INDEXES; k++) {
			if (resp->blob_lens[k] != RPC_INDEX_UNITS_LEN)
				continue;
			sl->iids[sl->n_ix] = bytes_get_le32(resp->blobs[k]);
			sl->ihalf[sl->n_ix++] = bytes_get_le64(resp->blobs[k] +
			    4);
		}
		return;
	}
	value item, shown;
	sl->half = capacity_read_half_units(resp->old_size, g->consistent);
	if (resp->found && resp->item != NULL &&
	    codec_decode(wc->a, resp->item, resp->item_len, &item) == KV_OK) {
		shown = item;
		if (g->x.proj == NULL || expr_project(wc->a, &item, g->x.proj,
		    &shown) == KV_OK)
			sl->item = json_from_item(&shown);
		sl->bytes = resp->item_len;
	}
}

/* Entry i on its own: routed, sent, retried after stale routes. */
static void
run_one(batch_job *b, api_ctx *wc, size_t i)
{
	entry *e = &b->es[i];
	slot *sl = &b->slots[i];
	item_op op = entry_op(b, i);
	rpc_response resp;

	if ((e->put && !ops_item_encode(wc, &e->v, &op, &sl->fail)) ||
	    !ops_item_call(wc, &op, &resp, &sl->fail)) {
		sl->throttled = op.throttled;
		return;
	}
	finish(b, wc, i, &resp);
	wire_response_fini(&resp);
}

/*
 * Sends every routed entry owned by `node` in one MULTI and books the
 * answers. Entries the node answers STALE_ROUTE are marked `again`.
 */
static void
run_group(batch_job *b, api_ctx *wc, uint32_t node)
{
	size_t idx[RPC_MULTI_MAX], n = 0;
	uint8_t *bufs[RPC_MULTI_MAX];
	const uint8_t *subs[RPC_MULTI_MAX];
	size_t lens[RPC_MULTI_MAX];
	kv_err rv = KV_OK;

	for (size_t i = 0; i < b->n && n < RPC_MULTI_MAX; i++)
		if (b->node[i] == node)
			idx[n++] = i;
	if (n == 0)
		return;
	size_t packed = 0;
	while (packed < n && (rv = wire_pack_request(&b->ops[idx[packed]].req,
	    &bufs[packed], &lens[packed])) == KV_OK) {
		subs[packed] = bufs[packed];
		packed++;
	}
	rpc_request req = { .op = RPC_MULTI, .subs = subs, .sub_lens = lens,
		.n_subs = n };
	rpc_response resp;
	memset(&resp, 0, sizeof(resp));
	if (rv == KV_OK)
		rv = conn_call(wc->r, node, &req, wc->a, &resp);
	if (rv == KV_OK && (resp.code != KV_OK || resp.n_subs != n))
		rv = resp.code != KV_OK ? resp.code : KV_PROTO;
	for (size_t k = 0; k < n; k++) {
		size_t i = idx[k];
		slot *sl = &b->slots[i];
		rpc_response one;
		if (rv != KV_OK) {
			errors_from_kv(&sl->fail, rv);
			continue;
		}
		if (wire_unpack_response(resp.subs[k], resp.sub_lens[k],
		    wc->a, &one) != KV_OK) {
			errors_from_kv(&sl->fail, KV_PROTO);
			continue;
		}
		int a = ops_item_answer(wc, &b->ops[i], &one, &sl->fail);
		if (a < 0) {
			b->again[i] = true;
		} else if (a == 0) {
			sl->throttled = b->ops[i].throttled;
		} else {
			finish(b, wc, i, &one);
			wire_response_fini(&one);
		}
	}
	wire_response_fini(&resp);
	for (size_t k = 0; k < packed; k++)
		free(bufs[k]);
}

static void *
worker(void *arg)
{
	batch_job *b = arg;
	api_ctx wc = *b->c;
	thread_name("kv-batch");
	arena a;
	wc.a = &a;
	for (;;) {
		size_t node = atomic_fetch_add(&b->next, 1);
		if (node >= b->c->r->cfg.n_nodes)
			break;
		arena_init(&a);
		run_group(b, &wc, (uint32_t) node);
		arena_fini(&a);
	}
	return NULL;
}

/*
 * Runs every entry of b: routes them all, sends each node's share as one
 * MULTI message (one worker thread per node, in parallel), then sends the
 * entries whose partition had moved the single-item way, which refreshes
 * the catalog and retries.
 */
static void
run_all(batch_job *b)
{
	api_ctx *c = b->c;
	size_t n_nodes = c->r->cfg.n_nodes;
	pthread_t th[BATCH_THREADS];
	size_t started = 0;
	bool refreshed = false;

	b->ops = arena_alloc(c->a, (b->n + 1) * sizeof(*b->ops));
	b->node = arena_alloc(c->a, (b->n + 1) * sizeof(*b->node));
	b->again = arena_alloc(c->a, (b->n + 1) * sizeof(*b->again));
	if (b->ops == NULL || b->node == NULL || b->again == NULL) {
		for (size_t i = 0; i < b->n; i++)
			errors_from_kv(&b->slots[i].fail, KV_ENOMEM);
		return;
	}
	for (size_t i = 0; i < b->n; i++) {
		entry *e = &b->es[i];
		slot *sl = &b->slots[i];
		b->ops[i] = entry_op(b, i);
		b->again[i] = false;
		b->node[i] = UINT32_MAX; /* stays so when it fails here */
		if (!e->put || ops_item_encode(c, &e->v, &b->ops[i], &sl->fail))
			ops_item_route(c, &b->ops[i], &refreshed, &b->node[i],
			    &sl->fail);
	}
	atomic_init(&b->next, 0);
	for (size_t t = 1; t < BATCH_THREADS && t < n_nodes; t++) {
		if (pthread_create(&th[started], NULL, worker, b) != 0)
			break; /* the rest is done by fewer workers */
		started++;
	}
	worker(b);
	for (size_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	for (size_t i = 0; i < b->n; i++)
		if (b->again[i])
			run_one(b, c, i);
}

/*
 * Adds ItemCollectionMetrics to j: for each applied write to a table with
 * local indexes, its item collection's size after it, by table.
 */
static void
collection_metrics(api_ctx *c, const entry *es, const slot *slots, size_t n,
    json_t *j)
{
	json_t *map = json_object();
	route_read_lock();
	for (size_t i = 0; i < n; i++) {
		if (!slots[i].has_coll || retry_later(&slots[i]))
			continue;
		const table *t = catalog_find(route_current(c->r),
		    es[i].table, strlen(es[i].table));
		if (t != NULL)
			req_collection_metrics_add(map, t, &es[i].v,
			    slots[i].coll);
	}
	route_read_unlock();
	if (json_object_size(map) > 0)
		json_object_set_new(j, "ItemCollectionMetrics", map);
	else
		json_decref(map);
}

void
ops_batch_write(api_ctx *c, json_t *body, reply *out)
{
	json_t *items_j;
	const char *mode, *table;
	json_t *list;
	size_t n = 0;
	bool metrics;

	if (!read_request_items(body, &mode, &items_j, out) ||
	    !req_metrics_mode(body, &metrics, out))
		return;
	req_errors e = { 0 };
	json_object_foreach(items_j, table, list) {
		req_check_table_name(&e, table, "requestItems.key");
		if (!json_is_array(list)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload for member RequestItems");
			return;
		}
		if (json_array_size(list) < 1 ||
		    json_array_size(list) > BATCH_WRITE_MAX) {
			req_errors_add(&e, "Value '{%s=%s}' at 'requestItems' "
			    "failed to satisfy constraint: Map value must "
			    "satisfy constraint: [Member must have length less "
			    "than or equal to 25, Member must have length "
			    "greater than or equal to 1]", table,
			    json_array_size(list) == 0 ? "[]" : "[...]");
			break;
		}
		n += json_array_size(list);
	}
	if (json_object_size(items_j) == 0)
		req_errors_add(&e, "Value '{}' at 'requestItems' failed to "
		    "satisfy constraint: Member must have length greater than "
		    "or equal to 1");
	if (req_errors_reply(&e, out))
		return;
	if (n > BATCH_WRITE_MAX) {
		errors_reply(out, ERR_VALIDATION, "Too many items requested for "
		    "the BatchWriteItem call");
		return;
	}
	entry *es = arena_alloc(c->a, (n + 1) * sizeof(*es));
	if (es == NULL)
		return errors_from_kv(out, KV_ENOMEM);
	size_t k = 0;
	json_object_foreach(items_j, table, list) {
		size_t i;
		json_t *w;
		json_array_foreach(list, i, w) {
			json_t *put, *del, *inner = NULL;
			json_error jerr;
			if (!json_is_object(w)) {
				errors_reply(out, ERR_SERIALIZATION, "Unexpected "
				    "value type in payload for member "
				    "WriteRequest");
				return;
			}
			if (!req_object(w, "PutRequest", &put, out) ||
			    !req_object(w, "DeleteRequest", &del, out))
				return;
			if ((put == NULL) == (del == NULL)) {
				/* DynamoDB's words for a request that is neither
				 * (or both) a put and a delete. */
				errors_reply(out, ERR_VALIDATION, "Supplied "
				    "AttributeValue has more than one datatypes "
				    "set, must contain exactly one of the "
				    "supported datatypes");
				return;
			}
			es[k].table = table;
			es[k].src = w;
			es[k].put = put != NULL;
			if (!req_object(put != NULL ? put : del, put != NULL ?
			    "Item" : "Key", &inner, out))
				return;
			if (inner == NULL) {
				errors_reply(out, ERR_VALIDATION, "1 validation "
				    "error detected: Value null at "
				    "'requestItems.%s.member.%s' failed to "
				    "satisfy constraint: Member must not be "
				    "null", table, put != NULL ?
				    "putRequest.item" : "deleteRequest.key");
				return;
			}
			kv_err rv = json_to_item(c->a, inner, &es[k].v, &jerr);
			if (rv == KV_EINVAL) {
				from_json_error(out, &jerr);
				return;
			}
			if (rv != KV_OK)
				return errors_from_kv(out, rv);
			if (es[k].put && item_size(&es[k].v) > ITEM_MAX_SIZE) {
				errors_reply(out, ERR_VALIDATION, "Item size has "
				    "exceeded the maximum allowed size");
				return;
			}
			k++;
		}
	}
	if (!check_entries(c, es, n, out))
		return;

	slot *slots = arena_alloc(c->a, (n + 1) * sizeof(*slots));
	if (slots == NULL)
		return errors_from_kv(out, KV_ENOMEM);
	batch_job job = { .c = c, .es = es, .slots = slots, .n = n };
	run_all(&job);
	json_t *unprocessed = json_object(), *cc = charges_new();
	reply *first_error = all_throttled(slots, n);
	for (size_t i = 0; i < n && first_error == NULL; i++) {
		if (retry_later(&slots[i])) {
			/* Not applied (or not known to be): retry. */
			json_array_append(list_for(unprocessed, es[i].table),
			    es[i].src);
		} else if (slots[i].fail.status != 0) {
			if (first_error == NULL)
				first_error = &slots[i].fail;
			continue;
		} else {
			charge(c, cc, es[i].table, slots[i].half, &slots[i]);
		}
	}
	if (first_error != NULL) {
		free(out->body);
		*out = *first_error;
		first_error->body = NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(slots[i].fail.body);
	if (first_error != NULL) {
		json_decref(unprocessed);
		json_decref(cc);
		return;
	}
	json_t *j = json_pack("{s:o}", "UnprocessedItems", unprocessed);
	consumed_list(j, mode, cc);
	json_decref(cc);
	if (metrics)
		collection_metrics(c, es, slots, n, j);
	api_reply_json(out, j);
}

void
ops_batch_get(api_ctx *c, json_t *body, reply *out)
{
	json_t *items_j, *ka;
	const char *mode, *table;
	size_t n = 0, nt = 0;

	if (!read_request_items(body, &mode, &items_j, out))
		return;
	req_errors e = { 0 };
	if (json_object_size(items_j) == 0)
		req_errors_add(&e, "Value '{}' at 'requestItems' failed to "
		    "satisfy constraint: Member must have length greater than "
		    "or equal to 1");
	json_object_foreach(items_j, table, ka) {
		json_t *keys, *atg;
		size_t ml = strlen(table) + 48;
		char *member = arena_alloc(c->a, ml);
		if (member == NULL)
			return errors_from_kv(out, KV_ENOMEM);
		req_check_table_name(&e, table, "requestItems.key");
		if (!json_is_object(ka)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload for member RequestItems");
			return;
		}
		if (!req_array(ka, "Keys", &keys, out))
			return;
		if (keys == NULL || json_array_size(keys) < 1 ||
		    json_array_size(keys) > BATCH_GET_MAX)
			req_errors_add(&e, "Value %s at "
			    "'requestItems.%s.member.keys' failed to satisfy "
			    "constraint: %s", keys == NULL ? "null" :
			    json_array_size(keys) == 0 ? "'[]'" : "'[...]'",
			    table, keys == NULL ? "Member must not be null" :
			    json_array_size(keys) == 0 ?
			    "Member must have length greater than or equal to 1" :
			    "Member must have length less than or equal to 100");
		else
			n += json_array_size(keys);
		snprintf(member, ml, "requestItems.%s.member.attributesToGet",
		    table);
		if (!req_attributes_to_get(ka, member, &e, &atg, out))
			return;
	}
	if (req_errors_reply(&e, out))
		return;
	if (n > BATCH_GET_MAX) {
		errors_reply(out, ERR_VALIDATION, "Too many items requested for "
		    "the BatchGetItem call");
		return;
	}
	get_table *ts = arena_alloc(c->a,
	    (json_object_size(items_j) + 1) * sizeof(*ts));
	entry *es = arena_alloc(c->a, (n + 1) * sizeof(*es));
	size_t *owner = arena_alloc(c->a, (n + 1) * sizeof(*owner));
	if (ts == NULL || es == NULL || owner == NULL)
		return errors_from_kv(out, KV_ENOMEM);
	size_t k = 0;
	json_object_foreach(items_j, table, ka) {
		size_t i;
		json_t *kj, *keys = json_object_get(ka, "Keys");
		get_table *g = &ts[nt];
		g->name = table;
		g->src = ka;
		if (!req_bool(ka, "ConsistentRead", &g->consistent, out) ||
		    !req_exprs_read(c, ka, REQ_EXPR_PROJECTION, &g->x, out))
			return;
		json_array_foreach(keys, i, kj) {
			json_error jerr;
			if (!json_is_object(kj)) {
				errors_reply(out, ERR_SERIALIZATION, "Unexpected "
				    "value type in payload for member Keys");
				return;
			}
			kv_err rv = json_to_item(c->a, kj, &es[k].v, &jerr);
			if (rv == KV_EINVAL) {
				from_json_error(out, &jerr);
				return;
			}
			if (rv != KV_OK)
				return errors_from_kv(out, rv);
			es[k].table = table;
			es[k].src = kj;
			owner[k++] = nt;
		}
		nt++;
	}
	if (!check_entries(c, es, n, out))
		return;

	slot *slots = arena_alloc(c->a, (n + 1) * sizeof(*slots));
	if (slots == NULL)
		return errors_from_kv(out, KV_ENOMEM);
	batch_job job = { .c = c, .es = es, .slots = slots, .n = n,
		.ts = ts, .owner = owner };
	run_all(&job);
	json_t *responses = json_object(), *unprocessed = json_object();
	json_t *cc = charges_new();
	reply *first_error = NULL;
	size_t bytes = 0;
	for (size_t t = 0; t < nt; t++)
		json_object_set_new(responses, ts[t].name, json_array());
	first_error = all_throttled(slots, n);
	for (size_t i = 0; i < n && first_error == NULL; i++) {
		get_table *g = &ts[owner[i]];
		slot *sl = &slots[i];
		if (sl->fail.status != 0 && !retry_later(sl)) {
			if (first_error == NULL)
				first_error = &sl->fail;
			continue;
		}
		if (retry_later(sl) || bytes >= BATCH_GET_BYTES) {
			/* Unreachable, or past the 16 MB answer: retry. */
			json_t *u = json_object_get(unprocessed, g->name);
			if (u == NULL) {
				/* The table's options, with only these Keys. */
				u = json_deep_copy(g->src);
				json_object_set_new(u, "Keys", json_array());
				json_object_set_new(unprocessed, g->name, u);
			}
			json_array_append(json_object_get(u, "Keys"),
			    es[i].src);
			continue;
		}
		charge(c, cc, g->name, sl->half, NULL);
		if (sl->item != NULL) {
			json_array_append(json_object_get(responses, g->name),
			    sl->item);
			bytes += sl->bytes;
		}
	}
	if (first_error != NULL) {
		free(out->body);
		*out = *first_error;
		first_error->body = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		free(slots[i].fail.body);
		json_decref(slots[i].item);
	}
	if (first_error != NULL) {
		json_decref(responses);
		json_decref(unprocessed);
		json_decref(cc);
		return;
	}
	json_t *j = json_pack("{s:o,s:o}", "Responses", responses,
	    "UnprocessedKeys", unprocessed);
	consumed_list(j, mode, cc);
	json_decref(cc);
	api_reply_json(out, j);
}
