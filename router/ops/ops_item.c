/*
 * ops_item.c — PutItem, GetItem, UpdateItem and DeleteItem.
 *
 * Each request is checked completely before anything is sent (JSON shape,
 * attribute values, expressions and their placeholders, key schema,
 * sizes), so a bad request never reaches a node. Conditions and updates
 * travel to the node as parsed trees (core/expr_codec.h) and are evaluated
 * there, under the partition lock, against the stored item. The item's
 * partition comes from the catalog snapshot; a node that answers
 * KV_STALE_ROUTE makes the router refresh its catalog and retry.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "bytes.h"
#include "capacity.h"
#include "codec.h"
#include "conn.h"
#include "errors.h"
#include "expr_codec.h"
#include "item.h"
#include "json.h"
#include "keyenc.h"
#include "request.h"
#include "request_expr.h"
#include "ops_item.h"
#include "route.h"


/* Finds and checks the key of op in table t; false after filling *out. */
static bool
op_key(const table *t, const item_op *op, const value **pk,
    const value **sk, reply *out)
{
	if (op->is_item ? !req_item_key(t, op->v, pk, sk, out) :
	    !req_key(t, op->v, pk, sk, out))
		return false;
	if (op->upd == NULL)
		return true;
	expr_projection paths;
	arena tmp;
	arena_init(&tmp);
	bool ok = expr_update_paths(&tmp, op->upd, &paths) == KV_OK;
	for (size_t i = 0; ok && i < paths.n; i++) {
		const expr_path_elem *e = &paths.paths[i].elems[0];
		const key_def *keys[2] = { &t->hash, &t->range };
		for (int k = 0; k < 2; k++) {
			if (keys[k]->name == NULL || e->name == NULL ||
			    strlen(keys[k]->name) != e->name_len ||
			    memcmp(keys[k]->name, e->name, e->name_len) != 0)
				continue;
			errors_reply(out, ERR_VALIDATION, "One or more "
			    "parameter values were invalid: Cannot update "
			    "attribute %s. This attribute is part of the key",
			    keys[k]->name);
			arena_fini(&tmp);
			return false;
		}
	}
	arena_fini(&tmp);
	if (!ok)
		errors_from_kv(out, KV_ENOMEM);
	return ok;
}

bool
ops_item_route(api_ctx *c, item_op *op, bool *refreshed, uint32_t *owner,
    reply *out)
{
	rpc_request *req = &op->req;
	for (;;) {
		const value *pk, *sk;
		uint8_t *key;
		size_t klen;

		route_read_lock();
		const table *t = catalog_find(route_current(c->r), op->table,
		    strlen(op->table));
		if (t == NULL || !table_serving(t)) {
			route_read_unlock();
			if (refreshed == NULL)
				return false; /* the caller refreshes */
			if (!*refreshed) {
				*refreshed = true;
				route_refresh(c->r);
				continue;
			}
			req_table_missing(out);
			return false;
		}
		if (!op_key(t, op, &pk, &sk, out)) {
			route_read_unlock();
			return false;
		}
		const partition *p = table_partition_for(t, keyenc_hash(pk));
		if (keyenc_item_key(t->id, pk, sk, &key, &klen) != KV_OK) {
			route_read_unlock();
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
		req->key = (const uint8_t *) arena_dup(c->a, key, klen);
		req->key_len = klen;
		free(key);
		req->table_id = t->id;
		req->part = p->id;
		req->epoch = p->epoch;
		*owner = p->node;
		route_read_unlock();
		if (req->key == NULL) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
		return true;
	}
}

int
ops_item_answer(api_ctx *c, item_op *op, rpc_response *resp, reply *out)
{
	switch (resp->code) {
	case KV_STALE_ROUTE:
		wire_response_fini(resp);
		return -1;
	case KV_OK:
	case KV_COND_FAILED:
	case KV_EINVAL:
		return 1;
	case KV_THROTTLED:
		op->throttled = true;
		errors_throttled(out, resp->throttle, op->table,
		    resp->message, c->region);
		wire_response_fini(resp);
		return 0;
	default:
		errors_from_kv(out, resp->code);
		wire_response_fini(resp);
		return 0;
	}
}

bool
ops_item_call(api_ctx *c, item_op *op, rpc_response *resp, reply *out)
{
	bool refreshed = false;

	for (int attempt = 0; attempt < ROUTE_STALE_RETRIES; attempt++) {
		uint32_t owner;
		if (!ops_item_route(c, op, &refreshed, &owner, out))
			return false;
		kv_err rv = conn_call(c->r, owner, &op->req, c->a, resp);
		if (rv != KV_OK) {
			errors_from_kv(out, rv);
			return false;
		}
		int a = ops_item_answer(c, op, resp, out);
		if (a >= 0)
			return a == 1;
		route_stale(c->r, attempt);
		refreshed = true;
	}
	errors_reply(out, ERR_UNAVAILABLE,
	    "The partition map kept changing; try again");
	return false;
}

static bool
read_table_name(json_t *body, const char **name, reply *out)
{
	req_errors e = { 0 };
	if (!req_string(body, "TableName", name, out))
		return false;
	req_check_table_name(&e, *name, "tableName");
	return !req_errors_reply(&e, out);
}

/*
 * ReturnValues: UpdateItem takes all five; PutItem and DeleteItem only
 * NONE and ALL_OLD, and refuse the others as DynamoDB does.
 */
static bool
read_return_values(json_t *body, bool update, rpc_return *rv, reply *out)
{
	static const struct {
		const char *name;
		rpc_return rv;
	} modes[] = {
		{ "NONE", RPC_RETURN_NONE }, { "ALL_OLD", RPC_RETURN_ALL_OLD },
		{ "UPDATED_OLD", RPC_RETURN_UPDATED_OLD },
		{ "ALL_NEW", RPC_RETURN_ALL_NEW },
		{ "UPDATED_NEW", RPC_RETURN_UPDATED_NEW },
	};
	const char *s;
	*rv = RPC_RETURN_NONE;
	if (!req_string(body, "ReturnValues", &s, out))
		return false;
	if (s == NULL)
		return true;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(s, modes[i].name) != 0)
			continue;
		if (!update && i > 1) {
			errors_reply(out, ERR_VALIDATION,
			    "ReturnValues can only be ALL_OLD or NONE");
			return false;
		}
		*rv = modes[i].rv;
		return true;
	}
	errors_reply(out, ERR_VALIDATION,
	    "1 validation error detected: Value '%s' at 'returnValues' "
	    "failed to satisfy constraint: Member must satisfy enum value "
	    "set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]", s);
	return false;
}

static bool
read_return_on_failure(json_t *body, bool *all_old, reply *out)
{
	const char *s;
	*all_old = false;
	if (!req_string(body, "ReturnValuesOnConditionCheckFailure", &s, out))
		return false;
	if (s == NULL || strcmp(s, "NONE") == 0)
		return true;
	if (strcmp(s, "ALL_OLD") == 0) {
		*all_old = true;
		return true;
	}
	errors_reply(out, ERR_VALIDATION,
	    "1 validation error detected: Value '%s' at "
	    "'returnValuesOnConditionCheckFailure' failed to satisfy "
	    "constraint: Member must satisfy enum value set: [ALL_OLD, NONE]",
	    s);
	return false;
}

/* Converts a JSON item or key member; false after filling *out. */
static bool
read_item(api_ctx *c, json_t *body, const char *field, const char *member,
    value *v, reply *out)
{
	json_t *j;
	json_error jerr;
	if (!req_object(body, field, &j, out))
		return false;
	if (j == NULL) {
		errors_reply(out, ERR_VALIDATION,
		    "1 validation error detected: Value null at '%s' failed "
		    "to satisfy constraint: Member must not be null", member);
		return false;
	}
	kv_err rv = json_to_item(c->a, j, v, &jerr);
	if (rv == KV_EINVAL) {
		errors_reply(out, jerr.kind == JSON_ERR_SERIALIZATION ?
		    ERR_SERIALIZATION : ERR_VALIDATION, "%s", jerr.msg);
		return false;
	}
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return false;
	}
	return true;
}

/* Encodes the request's condition and update into op->req. */
static bool
encode_exprs(api_ctx *c, const req_exprs *x, item_op *op, reply *out)
{
	uint8_t *buf;
	size_t len;
	if (x->cond != NULL) {
		if (expr_codec_encode_cond(x->cond, &buf, &len) != KV_OK)
			return errors_from_kv(out, KV_ENOMEM), false;
		op->req.condition = (const uint8_t *) arena_dup(c->a, buf, len);
		op->req.condition_len = len;
		free(buf);
		if (op->req.condition == NULL)
			return errors_from_kv(out, KV_ENOMEM), false;
	}
	if (x->update != NULL) {
		if (expr_codec_encode_update(x->update, &buf, &len) != KV_OK)
			return errors_from_kv(out, KV_ENOMEM), false;
		op->req.update = (const uint8_t *) arena_dup(c->a, buf, len);
		op->req.update_len = len;
		free(buf);
		if (op->req.update == NULL)
			return errors_from_kv(out, KV_ENOMEM), false;
	}
	return true;
}

bool
ops_item_encode(api_ctx *c, const value *v, item_op *op, reply *out)
{
	size_t n = codec_size(v);
	uint8_t *buf = arena_alloc(c->a, n > 0 ? n : 1);
	if (buf == NULL)
		return errors_from_kv(out, KV_ENOMEM), false;
	codec_write(v, buf);
	op->req.item = buf;
	op->req.item_len = n;
	return true;
}

/*
 * Decodes the item in resp into *shown, projected by proj (NULL: whole).
 * Returns 1 with the item, 0 when resp has none, -1 when it is corrupt or
 * memory ran out.
 */
static int
item_shown(api_ctx *c, const rpc_response *resp, const expr_projection *proj,
    value *shown)
{
	value item;
	if (!resp->found || resp->item == NULL)
		return 0;
	if (codec_decode(c->a, resp->item, resp->item_len, &item) != KV_OK)
		return -1;
	if (proj == NULL) {
		*shown = item;
		return 1;
	}
	return expr_project(c->a, &item, proj, shown) == KV_OK ? 1 : -1;
}

/* Adds the item in resp to j as `field`; false on failure. */
static bool
add_item(api_ctx *c, json_t *j, const rpc_response *resp, const char *field)
{
	value shown;
	int has = item_shown(c, resp, NULL, &shown);
	if (has <= 0)
		return has == 0;
	json_t *v = json_from_item(&shown);
	return v != NULL && json_object_set_new(j, field, v) == 0;
}

/*
 * Writes the item in resp to t as the member `field`, projected by proj
 * (NULL: whole); nothing when there is none. False on failure.
 */
bool
ops_write_item(api_ctx *c, jtext *t, const rpc_response *resp,
    const char *field, const expr_projection *proj)
{
	value shown;
	int has = item_shown(c, resp, proj, &shown);
	if (has <= 0)
		return has == 0;
	jtext_member(t, field);
	json_write_item(t, &shown);
	return !t->failed;
}

json_t *
ops_collection_metrics(api_ctx *c, const item_op *op,
    const rpc_response *resp)
{
	json_t *j = NULL;
	if (!op->metrics || !resp->has_coll)
		return NULL;
	route_read_lock();
	const table *t = catalog_find(route_current(c->r), op->table,
	    strlen(op->table));
	if (t != NULL)
		j = req_collection_metrics(t, op->v, resp->coll_size);
	route_read_unlock();
	return j;
}

const char *
ops_index_name(api_ctx *c, const char *tname, uint32_t id, bool *local)
{
	const catalog *cat = route_current(c->r);
	*local = RPC_IS_LOCAL_INDEX_ID(id);
	if (*local) {
		const table *t = catalog_find(cat, tname, strlen(tname));
		for (size_t i = 0; t != NULL && i < t->n_indexes; i++)
			if (index_local_no(t, &t->indexes[i]) ==
			    (int) (id & 0xFF))
				return t->indexes[i].name;
		return NULL;
	}
	const table *it = table_find_id(cat, id);
	const char *slash = it != NULL ? strchr(it->name, '/') : NULL;
	return slash != NULL ? slash + 1 : NULL;
}

size_t
ops_index_units(api_ctx *c, const char *tname, const rpc_response *resp,
    const char **names, uint64_t *ihalf, bool *local)
{
	size_t n = 0;
	if (resp->n_blobs == 0)
		return 0;
	route_read_lock();
	for (size_t i = 0; i < resp->n_blobs; i++) {
		if (resp->blob_lens[i] != RPC_INDEX_UNITS_LEN)
			continue;
		const char *name = ops_index_name(c, tname,
		    bytes_get_le32(resp->blobs[i]), &local[n]);
		if (name == NULL)
			continue;
		names[n] = arena_dup(c->a, name, strlen(name));
		ihalf[n] = bytes_get_le64(resp->blobs[i] + 4);
		n += names[n] != NULL;
	}
	route_read_unlock();
	return n;
}

/*
 * Answers for a node's verdict on a write: the returned attributes, a
 * failed condition (with the item when asked), or a validation error
 * found against the stored item.
 */
static void
reply_write(api_ctx *c, const item_op *op, rpc_response *resp, reply *out)
{
	if (resp->code == KV_COND_FAILED) {
		json_t *extra = json_object();
		if (extra == NULL || !add_item(c, extra, resp, "Item")) {
			json_decref(extra);
			errors_from_kv(out, KV_ENOMEM);
			return;
		}
		errors_reply_with(out, ERR_CONDITIONAL_CHECK, extra,
		    "The conditional request failed");
		return;
	}
	if (resp->code == KV_EINVAL) {
		errors_reply(out, ERR_VALIDATION, "%s", resp->message != NULL ?
		    resp->message : "Invalid request");
		return;
	}
	jtext t;
	jtext_init(&t);
	jtext_lit(&t, "{");
	if (!ops_write_item(c, &t, resp, "Attributes", NULL)) {
		jtext_fini(&t);
		errors_from_kv(out, KV_ENOMEM);
		return;
	}
	/* The larger of the old and new item, in 1 KB steps; and what the
	 * write cost each global index, by the node's count. */
	uint64_t base = 2 * capacity_write_units(resp->old_size,
	    resp->new_size);
	size_t n = 0;
	const char **names = arena_alloc(c->a, (resp->n_blobs + 1) *
	    sizeof(*names));
	uint64_t *ihalf = arena_alloc(c->a, (resp->n_blobs + 1) *
	    sizeof(*ihalf));
	bool *local = arena_alloc(c->a, (resp->n_blobs + 1) *
	    sizeof(*local));
	if (op->capacity != NULL && names != NULL && ihalf != NULL &&
	    local != NULL)
		n = ops_index_units(c, op->table, resp, names, ihalf, local);
	req_consumed_indexes(&t, op->capacity, op->table, base, names, ihalf,
	    local, n);
	json_t *icm = ops_collection_metrics(c, op, resp);
	if (icm != NULL) {
		jtext_member(&t, "ItemCollectionMetrics");
		jtext_json(&t, icm);
		json_decref(icm);
	}
	jtext_lit(&t, "}");
	api_reply_text(out, &t);
}

/*
 * Reads, checks and encodes one single-item request into *ir (its table,
 * key or item, expressions and return values), everything in c->a and
 * borrowing body. False after filling *out.
 */
bool
ops_item_prepare(api_ctx *c, item_kind kind, json_t *body, item_req *ir,
    reply *out)
{
	static const rpc_op ops[] = { [ITEM_PUT] = RPC_PUT,
		[ITEM_GET] = RPC_GET, [ITEM_DELETE] = RPC_DELETE,
		[ITEM_UPDATE] = RPC_UPDATE };
	item_op *op = &ir->op;
	unsigned which = kind == ITEM_GET ? REQ_EXPR_PROJECTION :
	    kind == ITEM_UPDATE ? REQ_EXPR_CONDITION | REQ_EXPR_UPDATE :
	    REQ_EXPR_CONDITION;

	memset(ir, 0, sizeof(*ir));
	ir->kind = kind;
	op->req.op = ops[kind];
	op->is_item = kind == ITEM_PUT;
	if (!read_table_name(body, &op->table, out) ||
	    !req_capacity(body, &op->capacity, out))
		return false;
	if (kind == ITEM_GET) {
		if (!req_bool(body, "ConsistentRead", &ir->consistent, out))
			return false;
		op->req.consistent = ir->consistent;
	} else if (!read_return_values(body, kind == ITEM_UPDATE,
	    &op->req.return_values, out) ||
	    !read_return_on_failure(body, &op->req.return_on_failure, out) ||
	    !req_metrics_mode(body, &op->metrics, out)) {
		return false;
	}
	if (!read_item(c, body, op->is_item ? "Item" : "Key",
	    op->is_item ? "item" : "key", &ir->v, out) ||
	    !req_exprs_read(c, body, which, &ir->x, out))
		return false;
	if (kind == ITEM_PUT && item_size(&ir->v) > ITEM_MAX_SIZE) {
		errors_reply(out, ERR_VALIDATION,
		    "Item size has exceeded the maximum allowed size");
		return false;
	}
	op->v = &ir->v;
	if (kind == ITEM_UPDATE) {
		/* Without an update, UpdateItem still creates the item. */
		if (ir->x.update == NULL)
			ir->x.update = &ir->empty;
		op->upd = ir->x.update;
	}
	if ((kind == ITEM_PUT || kind == ITEM_UPDATE) &&
	    !ops_item_encode(c, &ir->v, op, out))
		return false;
	return encode_exprs(c, &ir->x, op, out);
}

/* Answers a request prepared by ops_item_prepare; finalises resp. */
void
ops_item_finish(api_ctx *c, item_req *ir, rpc_response *resp, reply *out)
{
	if (ir->kind != ITEM_GET) {
		reply_write(c, &ir->op, resp, out);
		wire_response_fini(resp);
		return;
	}
	jtext t;
	jtext_init(&t);
	jtext_lit(&t, "{");
	if (!ops_write_item(c, &t, resp, "Item", ir->x.proj)) {
		jtext_fini(&t);
		errors_from_kv(out, KV_ENOMEM);
	} else {
		/* A missing item still costs the minimum read. */
		req_consumed_text(&t, ir->op.capacity, ir->op.table,
		    capacity_read_half_units(resp->old_size, ir->consistent));
		jtext_lit(&t, "}");
		api_reply_text(out, &t);
	}
	wire_response_fini(resp);
}

/* One single-item operation, start to end, on the calling thread. */
static void
item_sync(api_ctx *c, item_kind kind, json_t *body, reply *out)
{
	item_req ir;
	rpc_response resp;
	if (ops_item_prepare(c, kind, body, &ir, out) &&
	    ops_item_call(c, &ir.op, &resp, out))
		ops_item_finish(c, &ir, &resp, out);
}

void
ops_item_put(api_ctx *c, json_t *body, reply *out)
{
	item_sync(c, ITEM_PUT, body, out);
}

void
ops_item_delete(api_ctx *c, json_t *body, reply *out)
{
	item_sync(c, ITEM_DELETE, body, out);
}

void
ops_item_update(api_ctx *c, json_t *body, reply *out)
{
	item_sync(c, ITEM_UPDATE, body, out);
}

void
ops_item_get(api_ctx *c, json_t *body, reply *out)
{
	item_sync(c, ITEM_GET, body, out);
}
