/*
 * ops_read.c — Query and Scan.
 *
 * Both read ranges of storage keys with RPC_RANGE, one partition at a
 * time. A Query's key condition becomes one key range inside one item
 * collection (core/keyenc.h: an item collection is one contiguous range
 * and the sort-key encoding preserves DynamoDB's order, so each sort-key
 * operator is a pair of byte bounds). A Scan walks the partitions in hash
 * order, or only the hash slice of its segment. A page stops after Limit
 * items read or once the items read reach 1 MB; LastEvaluatedKey is the
 * key of the last item read, and ExclusiveStartKey resumes right after it
 * (by storage key, so a resumed Scan also survives partition changes).
 * The filter runs on the nodes; projection here.
 */
#include <stdlib.h>
#include <string.h>

#include "ops_read.h"
#include "capacity.h"
#include "codec.h"
#include "conn.h"
#include "errors.h"
#include "expr_codec.h"
#include "index_key.h"
#include "json.h"
#include "keyenc.h"
#include "request.h"
#include "request_expr.h"
#include "route.h"

#define PAGE_BYTES (1024u * 1024u)
/* How a page's answer starts, written with its first item (reply_page). */
#define PAGE_HEAD "{\"Items\":["

/*
 * Answers a page that could not be read. A throttled partition fails the
 * whole request, as in DynamoDB (whatever other partitions already read
 * stays charged to them); on an index (index not NULL), the index's.
 */
static void
page_failed(api_ctx *c, const page *pg, const char *table_name,
    const char *index, kv_err rv, reply *out)
{
	if (rv == KV_THROTTLED)
		errors_throttled(out, pg->throttle | (index != NULL ?
		    RPC_THROTTLE_INDEX : 0), table_name, index, c->region);
	else
		errors_from_kv(out, rv);
}

/* bytes_cmp compares two byte strings as memcmp would order keys. */
static int
bytes_cmp(const uint8_t *x, size_t xl, const uint8_t *y, size_t yl)
{
	int c = memcmp(x, y, xl < yl ? xl : yl);
	return c != 0 ? c : xl < yl ? -1 : xl > yl;
}

/* Appends a prefix successor: the first key after every key with prefix
 * p[0..n) (trailing 0xFF bytes dropped, the last byte incremented). */
static size_t
successor(uint8_t *p, size_t n)
{
	while (n > 0 && p[n - 1] == 0xFF)
		n--;
	if (n > 0)
		p[n - 1]++;
	return n;
}

static bool
read_common(api_ctx *c, json_t *body, unsigned which, read_req *r,
    reply *out)
{
	req_errors e = { 0 };
	json_t *limit_j, *esk_j, *atg;
	const char *select, *index;

	memset(r, 0, sizeof(*r));
	if (!req_string(body, "TableName", &r->table, out) ||
	    !req_string(body, "IndexName", &index, out) ||
	    !req_integer(body, "Limit", &limit_j, out) ||
	    !req_bool(body, "ConsistentRead", &r->consistent, out) ||
	    !req_string(body, "Select", &select, out) ||
	    !req_object(body, "ExclusiveStartKey", &esk_j, out) ||
	    !req_capacity(body, &r->capacity, out))
		return false;
	/* Read again by req_exprs_read; here for its shape check. */
	if (!req_attributes_to_get(body, "attributesToGet", &e, &atg, out))
		return false;
	req_check_table_name(&e, r->table, "tableName");
	if (limit_j != NULL && json_integer_value(limit_j) < 1)
		req_errors_add(&e, "Value '%lld' at 'limit' failed to satisfy "
		    "constraint: Member must have value greater than or equal "
		    "to 1", (long long) json_integer_value(limit_j));
	if (select != NULL && strcmp(select, "ALL_ATTRIBUTES") != 0 &&
	    strcmp(select, "SPECIFIC_ATTRIBUTES") != 0 &&
	    strcmp(select, "COUNT") != 0 &&
	    strcmp(select, "ALL_PROJECTED_ATTRIBUTES") != 0)
		req_errors_add(&e, "Value '%s' at 'select' failed to satisfy "
		    "constraint: Member must satisfy enum value set: "
		    "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
		    "ALL_PROJECTED_ATTRIBUTES]", select);
	if (req_errors_reply(&e, out))
		return false;
	if (limit_j != NULL)
		r->limit = json_integer_value(limit_j) > UINT32_MAX ?
		    UINT32_MAX : (uint32_t) json_integer_value(limit_j);
	if (!req_exprs_read(c, body, which, &r->x, out))
		return false;
	r->select = r->x.proj != NULL ? SELECT_SPECIFIC : SELECT_ALL;
	r->select_given = select;
	r->local = -1;
	if (select != NULL) {
		if (strcmp(select, "ALL_PROJECTED_ATTRIBUTES") == 0 &&
		    index == NULL) {
			errors_reply(out, ERR_VALIDATION, "One or more parameter "
			    "values were invalid: Select type "
			    "ALL_PROJECTED_ATTRIBUTES is not supported");
			return false;
		}
		if (strcmp(select, "COUNT") == 0) {
			r->select = SELECT_COUNT;
		} else if (strcmp(select, "SPECIFIC_ATTRIBUTES") == 0) {
			if (r->x.proj == NULL) {
				errors_reply(out, ERR_VALIDATION, "One or more "
				    "parameter values were invalid: Must "
				    "specify the AttributesToGet or "
				    "ProjectionExpression when choosing to get "
				    "SPECIFIC_ATTRIBUTES");
				return false;
			}
		} else if (r->x.proj != NULL) {
			errors_reply(out, ERR_VALIDATION, "One or more "
			    "parameter values were invalid: Cannot specify the "
			    "%s when choosing to get %s",
			    json_object_get(body, "AttributesToGet") != NULL ?
			    "AttributesToGet" : "ProjectionExpression", select);
			return false;
		}
	}
	if (esk_j != NULL) {
		json_error jerr;
		kv_err rv = json_to_item(c->a, esk_j, &r->esk, &jerr);
		if (rv == KV_EINVAL) {
			errors_reply(out, jerr.kind == JSON_ERR_SERIALIZATION ?
			    ERR_SERIALIZATION : ERR_VALIDATION, "%s", jerr.msg);
			return false;
		}
		if (rv != KV_OK)
			return errors_from_kv(out, rv), false;
		r->has_esk = true;
	}
	r->index = index; /* checked once the table is known */
	return true;
}

/*
 * Adds the node's answer to a RANGE request to the page; finalises resp.
 * Returns KV_OK, KV_STALE_ROUTE or a failure (a throttle sets
 * pg->throttle).
 */
static kv_err
take_range(api_ctx *c, const read_req *r, rpc_response *resp, page *pg)
{
	if (resp->code != KV_OK) {
		kv_err rv = resp->code;
		pg->throttle = resp->throttle;
		wire_response_fini(resp);
		return rv;
	}
	pg->scanned += resp->scanned;
	pg->read_bytes += resp->read_bytes;
	for (size_t i = 0; i < resp->n_items; i++) {
		value item;
		if (codec_decode(c->a, resp->items[i], resp->item_lens[i], &item)
		    != KV_OK) {
			wire_response_fini(resp);
			return KV_CORRUPT;
		}
		pg->count++;
		if (r->select == SELECT_COUNT)
			continue;
		value shown = item;
		if (r->x.proj != NULL &&
		    expr_project(c->a, &item, r->x.proj, &shown) != KV_OK) {
			wire_response_fini(resp);
			return KV_ENOMEM;
		}
		/* The answer is written around the items: see reply_page. */
		if (pg->items.len == 0)
			jtext_lit(&pg->items, PAGE_HEAD);
		else
			jtext_lit(&pg->items, ",");
		json_write_item(&pg->items, &shown);
	}
	if (resp->last_item != NULL) {
		if (codec_decode(c->a, resp->last_item, resp->last_item_len,
		    &pg->last) != KV_OK) {
			wire_response_fini(resp);
			return KV_CORRUPT;
		}
		pg->stopped = true;
	}
	wire_response_fini(resp);
	return KV_OK;
}

/* The RANGE request's `local` for r (proto/wire.h). */
static uint32_t
local_field(const read_req *r)
{
	if (r->local < 0)
		return 0;
	return (uint32_t) (r->local + 1) | (r->fetch ? RPC_LOCAL_FETCH : 0);
}

/*
 * Reads [lo, hi) of partition p for the page, within what is left of the
 * page's item and byte budget. Returns KV_OK, KV_STALE_ROUTE or a failure.
 */
static kv_err
read_part(api_ctx *c, const read_req *r, const uint8_t *cond, size_t condl,
    uint32_t table_id, const partition *p, const uint8_t *lo, size_t lol,
    const uint8_t *hi, size_t hil, page *pg)
{
	rpc_request req = {
		.op = RPC_RANGE, .table_id = table_id, .part = p->id,
		.epoch = p->epoch, .range_lo = lo, .range_lo_len = lol,
		.range_hi = hi, .range_hi_len = hil, .backward = r->backward,
		.limit = r->limit != 0 ? r->limit - pg->scanned : 0,
		.max_bytes = PAGE_BYTES - pg->read_bytes,
		.consistent = r->consistent, .condition = cond,
		.condition_len = condl, .local = local_field(r),
	};
	rpc_response resp;
	kv_err rv = conn_call(c->r, p->node, &req, c->a, &resp);
	if (rv != KV_OK)
		return rv;
	return take_range(c, r, &resp, pg);
}

/*
 * The key attributes of a read's LastEvaluatedKey and ExclusiveStartKey
 * in keys[], each name once; returns how many. They are the keys of qt,
 * the table or index read (of d, its global index, whose keys may have
 * several attributes each), then those of t, its base table: an index's
 * LastEvaluatedKey names both, as DynamoDB's does.
 */
static size_t
read_keys(const table *qt, const table *t, const index_def *d,
    const key_def *keys[2 * INDEX_KEY_PARTS + 2])
{
	const key_def *all[2 * INDEX_KEY_PARTS + 4];
	size_t n = 0, k = 0;
	if (d != NULL) {
		n = index_key_all(d, all, NULL);
	} else {
		all[n++] = &qt->hash;
		all[n++] = &qt->range;
	}
	all[n++] = &t->hash;
	all[n++] = &t->range;
	for (size_t i = 0; i < n; i++) {
		bool dup = all[i]->name == NULL;
		for (size_t j = 0; j < k && !dup; j++)
			dup = strcmp(keys[j]->name, all[i]->name) == 0;
		if (!dup)
			keys[k++] = all[i];
	}
	return k;
}

/* Writes the key attributes of item (read_keys) as a map. */
static void
write_key(jtext *j, const table *qt, const table *t, const index_def *d,
    const value *item)
{
	const key_def *keys[2 * INDEX_KEY_PARTS + 2];
	size_t nk = read_keys(qt, t, d, keys);
	bool first = true;
	jtext_lit(j, "{");
	for (size_t i = 0; i < nk; i++) {
		size_t n = strlen(keys[i]->name);
		const value *v = item_attr(item, keys[i]->name, n);
		if (v == NULL)
			continue;
		if (!first)
			jtext_lit(j, ",");
		first = false;
		jtext_string(j, keys[i]->name, n);
		jtext_lit(j, ":");
		json_write_value(j, v);
	}
	jtext_lit(j, "}");
}

/*
 * Renders the page: its items text, which starts the answer with
 * {"Items":[ once an item is in, becomes the answer.
 */
static void
reply_page(const read_req *r, const table *t, const table *qt, page *pg,
    reply *out)
{
	jtext *j = &pg->items;
	if (r->select != SELECT_COUNT) {
		if (j->len == 0)
			jtext_lit(j, PAGE_HEAD);
		jtext_lit(j, "]");
	} else {
		jtext_lit(j, "{");
	}
	jtext_member(j, "Count");
	jtext_uint(j, pg->count);
	jtext_member(j, "ScannedCount");
	jtext_uint(j, pg->scanned);
	if (pg->stopped) {
		jtext_member(j, "LastEvaluatedKey");
		write_key(j, qt, t, r->gsi, &pg->last);
	}
	/* One page: its bytes read are rounded up to 4 KB once; on an
	 * index, they are the index's (the table itself reads nothing). */
	uint64_t half = capacity_read_half_units(pg->read_bytes,
	    r->consistent);
	if (qt != t) {
		const char *names[1] = { r->index };
		bool local = r->local >= 0;
		req_consumed_indexes(j, r->capacity, t->name, 0, names, &half,
		    &local, 1);
	} else {
		req_consumed_text(j, r->capacity, t->name, half);
	}
	jtext_lit(j, "}");
	api_reply_text(out, j);
}

static bool
encode_filter(api_ctx *c, const read_req *r, const uint8_t **cond,
    size_t *condl, reply *out)
{
	uint8_t *buf;
	*cond = NULL;
	*condl = 0;
	if (r->x.filter == NULL)
		return true;
	if (expr_codec_encode_cond(r->x.filter, &buf, condl) != KV_OK)
		return errors_from_kv(out, KV_ENOMEM), false;
	*cond = (const uint8_t *) arena_dup(c->a, buf, *condl);
	free(buf);
	if (*cond == NULL)
		return errors_from_kv(out, KV_ENOMEM), false;
	return true;
}

/*
 * Finds an ACTIVE table (refreshing once); NULL after filling *out. With
 * refreshed NULL it never refreshes, and leaves *out untouched.
 */
static const table *
find_table(api_ctx *c, const char *name, bool *refreshed, reply *out)
{
	const table *t = catalog_find(route_current(c->r), name, strlen(name));
	if (t != NULL && table_serving(t))
		return t;
	if (refreshed == NULL)
		return NULL; /* *out untouched: the caller refreshes */
	if (!*refreshed) {
		*refreshed = true;
		route_read_unlock();
		route_refresh(c->r);
		route_read_lock();
		t = catalog_find(route_current(c->r), name, strlen(name));
		if (t != NULL && table_serving(t))
			return t;
	}
	req_table_missing(out);
	return NULL;
}

/* Checks ExclusiveStartKey against the table's key schema. */
static bool
check_esk(const table *t, const value *esk, const value **pk,
    const value **sk, reply *out)
{
	reply tmp = { 0 };
	if (!req_key(t, esk, pk, sk, &tmp)) {
		free(tmp.body);
		errors_reply(out, ERR_VALIDATION, "The provided starting key "
		    "is invalid: The provided key element does not match the "
		    "schema");
		return false;
	}
	return true;
}

/* A Query's start key must lie inside what the query reads. */
static bool
esk_in_query(const read_req *r, const value *pk, const value *epk,
    reply *out)
{
	if (!value_equal(pk, epk)) {
		errors_reply(out, ERR_VALIDATION, "The provided starting key is "
		    "outside query boundaries based on provided conditions");
		return false;
	}
	if (!expr_eval_condition(r->x.key, &r->esk)) {
		errors_reply(out, ERR_VALIDATION, "The provided starting key "
		    "does not match the range key predicate");
		return false;
	}
	return true;
}

/* Whether o names an attribute index d of t does not project. */
static bool
operand_outside(const table *t, const index_def *d, const expr_operand *o)
{
	if (o->kind == EXPR_OPND_PATH) {
		const expr_path_elem *e = &o->path.elems[0];
		return e->name != NULL && !index_projects(t, d, e->name,
		    e->name_len);
	}
	for (size_t i = 0; o->kind == EXPR_OPND_FUNC && i < o->nargs; i++)
		if (operand_outside(t, d, &o->args[i]))
			return true;
	return false;
}

static bool
cond_outside(const table *t, const index_def *d, const expr_cond *c)
{
	for (size_t i = 0; i < c->nops; i++)
		if (operand_outside(t, d, &c->ops[i]))
			return true;
	for (size_t i = 0; i < c->nkids; i++)
		if (cond_outside(t, d, c->kids[i]))
			return true;
	return false;
}

/*
 * Whether a read of local index d of t wants attributes that d does not
 * project: DynamoDB then fetches each entry's item from the table.
 */
static bool
wants_fetch(const table *t, const index_def *d, const read_req *r)
{
	if (d->projection == PROJECT_ALL || r->select == SELECT_COUNT)
		return r->x.filter != NULL && d->projection != PROJECT_ALL &&
		    cond_outside(t, d, r->x.filter);
	if (r->select_given != NULL &&
	    strcmp(r->select_given, "ALL_ATTRIBUTES") == 0)
		return true;
	for (size_t i = 0; r->x.proj != NULL && i < r->x.proj->n; i++) {
		const expr_path_elem *e = &r->x.proj->paths[i].elems[0];
		if (e->name != NULL && !index_projects(t, d, e->name,
		    e->name_len))
			return true;
	}
	return r->x.filter != NULL && cond_outside(t, d, r->x.filter);
}

/*
 * The table a read r of t reads: t itself without an IndexName, a global
 * index's table, or for a local index a view of t (in c->a, borrowing t,
 * valid while the route's read lock is held) whose sort key is the
 * index's; r->local says which local index (-1: none), and r->fetch
 * whether its entries are read with their items. NULL when the index is
 * missing or refuses the read (with *out filled, unless quiet) or is not
 * readable yet. Needs the route read lock.
 */
static const table *
read_table_of(api_ctx *c, const table *t, read_req *r, bool consistent,
    reply *out, bool quiet)
{
	const char *index = r->index;
	r->local = -1;
	r->gsi = NULL;
	if (index == NULL)
		return t;
	for (size_t i = 0; i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		if (strcmp(d->name, index) != 0 || d->deleting)
			continue;
		bool all = r->select_given != NULL &&
		    strcmp(r->select_given, "ALL_ATTRIBUTES") == 0;
		if (d->local) {
			table *v = arena_alloc(c->a, sizeof(*v));
			if (v == NULL) {
				if (!quiet)
					errors_from_kv(out, KV_ENOMEM);
				return NULL;
			}
			*v = *t;
			v->range = d->range;
			v->indexes = NULL;
			v->n_indexes = 0;
			r->local = index_local_no(t, d);
			r->fetch = wants_fetch(t, d, r);
			return v;
		}
		if (consistent) {
			if (!quiet)
				errors_reply(out, ERR_VALIDATION, "Consistent "
				    "reads are not supported on global "
				    "secondary indexes");
			return NULL;
		}
		if (all && d->projection != PROJECT_ALL) {
			if (!quiet)
				errors_reply(out, ERR_VALIDATION, "One or more "
				    "parameter values were invalid: Select type "
				    "ALL_ATTRIBUTES is not supported for global "
				    "secondary index %s because its projection "
				    "type is not ALL", index);
			return NULL;
		}
		const table *it = table_find_id(route_current(c->r),
		    d->table_id);
		if (it == NULL || !table_serving(it) || it->backfilling) {
			if (!quiet)
				errors_reply(out, ERR_VALIDATION, "Cannot read "
				    "from backfilling global secondary index: "
				    "%s", index);
			return NULL;
		}
		r->gsi = d;
		return it;
	}
	if (!quiet)
		errors_reply(out, ERR_VALIDATION, "The table does not have the "
		    "specified index: %s", index);
	return NULL;
}

/*
 * The storage key an ExclusiveStartKey names in qt (t, or an index of t
 * as r says: then it must hold the index's keys and the table's, and
 * nothing else), in c->a; NULL after filling *out. The index's (or
 * table's) partition key value in *pk.
 */
static uint8_t *
esk_storage_key(api_ctx *c, const table *t, const table *qt,
    const read_req *r, const value **pk, size_t *len, reply *out)
{
	const value *esk = &r->esk;
	const value *sk = NULL, *bpk = NULL, *bsk = NULL;
	uint8_t *k, *ka;
	kv_err rv;
	if (qt == t) {
		if (!check_esk(t, esk, pk, &sk, out))
			return NULL;
		rv = keyenc_item_key(t->id, *pk, sk, &k, len);
	} else {
		const key_def *keys[2 * INDEX_KEY_PARTS + 2];
		size_t nk = read_keys(qt, t, r->gsi, keys);
		bool ok = esk->len == nk;
		for (size_t i = 0; ok && i < nk; i++) {
			const value *v = item_attr(esk, keys[i]->name,
			    strlen(keys[i]->name));
			ok = v != NULL && v->type == keys[i]->type;
		}
		if (!ok) {
			errors_reply(out, ERR_VALIDATION, "The provided starting "
			    "key is invalid: The provided key element does not "
			    "match the schema");
			return NULL;
		}
		if (r->gsi != NULL) {
			/* Every attribute is there with its type, so only
			 * memory can fail (core/index_key.h). */
			value *iv = arena_alloc(c->a, 2 * sizeof(*iv));
			if (iv == NULL || index_key_value(r->gsi, false, esk,
			    c->a, &iv[0]) < 0 || (r->gsi->range.name != NULL &&
			    index_key_value(r->gsi, true, esk, c->a, &iv[1]) <
			    0)) {
				errors_from_kv(out, KV_ENOMEM);
				return NULL;
			}
			*pk = &iv[0];
			sk = r->gsi->range.name != NULL ? &iv[1] : NULL;
		} else {
			*pk = item_attr(esk, qt->hash.name,
			    strlen(qt->hash.name));
			sk = qt->range.name == NULL ? NULL : item_attr(esk,
			    qt->range.name, strlen(qt->range.name));
		}
		bpk = item_attr(esk, t->hash.name, strlen(t->hash.name));
		bsk = t->range.name == NULL ? NULL : item_attr(esk,
		    t->range.name, strlen(t->range.name));
		rv = r->local >= 0 ? keyenc_local_key(t->id, r->local, *pk, sk,
		    bsk, &k, len) :
		    keyenc_index_key(qt->id, *pk, sk, bpk, bsk, &k, len);
	}
	if (rv != KV_OK || (ka = arena_alloc(c->a, *len + 1)) == NULL) {
		if (rv == KV_OK)
			free(k);
		errors_from_kv(out, KV_ENOMEM);
		return NULL;
	}
	memcpy(ka, k, *len);
	free(k);
	return ka;
}

/* The first of keys[0..nk) that a path of o names, or NULL. */
static const char *
operand_key(const key_def *const *keys, size_t nk, const expr_operand *o)
{
	if (o->kind == EXPR_OPND_PATH) {
		const expr_path_elem *e = &o->path.elems[0];
		for (size_t i = 0; i < nk && e->name != NULL; i++)
			if (strlen(keys[i]->name) == e->name_len &&
			    memcmp(keys[i]->name, e->name, e->name_len) == 0)
				return keys[i]->name;
		return NULL;
	}
	for (size_t i = 0; o->kind == EXPR_OPND_FUNC && i < o->nargs; i++) {
		const char *k = operand_key(keys, nk, &o->args[i]);
		if (k != NULL)
			return k;
	}
	return NULL;
}

static const char *
cond_key(const key_def *const *keys, size_t nk, const expr_cond *c)
{
	for (size_t i = 0; i < c->nops; i++) {
		const char *k = operand_key(keys, nk, &c->ops[i]);
		if (k != NULL)
			return k;
	}
	for (size_t i = 0; i < c->nkids; i++) {
		const char *k = cond_key(keys, nk, c->kids[i]);
		if (k != NULL)
			return k;
	}
	return NULL;
}

/*
 * A Query's filter may not name key attributes of the table or index
 * read (the key condition does).
 */
static bool
filter_keys_refused(json_t *body, const table *t, const read_req *r,
    reply *out)
{
	const key_def *keys[2 * INDEX_KEY_PARTS];
	size_t nk = 0;
	if (r->gsi != NULL) {
		nk = index_key_all(r->gsi, keys, NULL);
	} else {
		keys[nk++] = &t->hash;
		if (t->range.name != NULL)
			keys[nk++] = &t->range;
	}
	const char *k = r->x.filter != NULL ? cond_key(keys, nk,
	    r->x.filter) : NULL;
	if (k == NULL)
		return false;
	bool legacy = json_object_get(body, "QueryFilter") != NULL &&
	    !json_is_null(json_object_get(body, "QueryFilter"));
	errors_reply(out, ERR_VALIDATION, "%s can only contain non-primary "
	    "key attributes: Primary key attribute: %s", legacy ?
	    "QueryFilter" : "Filter Expression", k);
	return true;
}

/* Storage-key bounds [lo, hi) of a Query's key condition. */
typedef struct bounds {
	uint8_t *lo, *hi;
	size_t lol, hil;
} bounds;

/*
 * set_bound makes dst the key k, or with after the first key after every
 * key that begins with k (its prefix successor): an index's entries
 * continue the index key with the base item's key (keyenc_index_key).
 * dst has room.
 */
static void
set_bound(uint8_t *dst, size_t *dstl, const uint8_t *k, size_t kl,
    bool after)
{
	memcpy(dst, k, kl);
	*dstl = after ? successor(dst, kl) : kl;
}

/*
 * Where a Query's sort-key condition applies: the item collection's (or
 * index key's) prefix coll[0..cl), and for a multi-attribute sort key
 * (core/index_key.h) the encodings pre[0..prel) of the attributes that
 * the conditions before the last one fix.
 */
typedef struct sort_space {
	const uint8_t *coll;
	size_t cl;
	bool multi;
	const uint8_t *pre;
	size_t prel;
} sort_space;

/*
 * Writes to buf (room for sort_room) the first storage key of the sort
 * key values equal to v, or with prefix those that begin with v (S or
 * B), and returns its length: every key of those values begins with it.
 * Without v (multi only), the first key of the values that begin with
 * the fixed attributes. 0 without memory.
 */
static size_t
sort_bound(api_ctx *c, const sort_space *s, const value *v, bool prefix,
    uint8_t *buf)
{
	memcpy(buf, s->coll, s->cl);
	if (!s->multi) {
		size_t n = s->cl + keyenc_value(v, buf + s->cl);
		return prefix ? n - 2 : n; /* without the terminator 00 01 */
	}
	/* The Binary value pre + enc(v), encoded without its terminator. */
	size_t vl = v != NULL ? keyenc_value_size(v) : 0;
	uint8_t *raw = arena_alloc_raw(c->a, s->prel + vl + 1);
	if (raw == NULL)
		return 0;
	if (s->prel > 0)
		memcpy(raw, s->pre, s->prel);
	if (v != NULL)
		vl = keyenc_value(v, raw + s->prel) - (prefix ? 2 : 0);
	value bin = { .type = VAL_B, .len = s->prel + vl,
	    .u.bytes = (const char *) raw };
	return s->cl + keyenc_value(&bin, buf + s->cl) - 2;
}

/* The room sort_bound needs for a value of encoded size vl. */
static size_t
sort_room(const sort_space *s, size_t vl)
{
	return s->cl + 2 * (s->prel + vl) + 4;
}

/*
 * Matches the key conditions kc[0..n) to the partition key's attributes
 * hp[0..nh) and the sort key's rp[0..nr) (one each for a table; up to
 * INDEX_KEY_PARTS each for a global index's multi-attribute keys) in
 * hc[] and rc[], and checks their shape: every partition key attribute
 * with =, the sort key's attributes a leading run of them, each but the
 * last with =. For several sort attributes these rules are DynamoDB's;
 * the words of the refusals a single attribute cannot meet are ours.
 */
static bool
match_key_conds(const expr_key_cond *kc, size_t n,
    const key_def *const *hp, size_t nh, const key_def *const *rp,
    size_t nr, const expr_key_cond **hc, const expr_key_cond **rc,
    size_t *nrc, reply *out)
{
	for (size_t i = 0; i < n; i++) {
		size_t l = kc[i].attr_len, j;
		bool found = false;
		for (j = 0; j < nh && !found; j++)
			if (strlen(hp[j]->name) == l &&
			    memcmp(hp[j]->name, kc[i].attr, l) == 0)
				hc[j] = &kc[i], found = true;
		for (j = 0; j < nr && !found; j++)
			if (strlen(rp[j]->name) == l &&
			    memcmp(rp[j]->name, kc[i].attr, l) == 0)
				rc[j] = &kc[i], found = true;
		if (found)
			continue;
		if (nr == 0) {
			errors_reply(out, ERR_VALIDATION, "Query key condition "
			    "not supported");
			return false;
		}
		const char *miss = NULL;
		for (j = 0; j < nh && miss == NULL; j++)
			if (hc[j] == NULL)
				miss = hp[j]->name;
		for (j = 0; j < nr && miss == NULL; j++)
			if (rc[j] == NULL)
				miss = rp[j]->name;
		errors_reply(out, ERR_VALIDATION, "Query condition missed key "
		    "schema element: %s", miss != NULL ? miss : rp[0]->name);
		return false;
	}
	for (size_t j = 0; j < nh; j++) {
		if (hc[j] == NULL) {
			errors_reply(out, ERR_VALIDATION, "Query condition missed "
			    "key schema element: %s", hp[j]->name);
			return false;
		}
		if (hc[j]->op != EXPR_KEY_EQ) {
			errors_reply(out, ERR_VALIDATION, "Query key condition "
			    "not supported");
			return false;
		}
	}
	size_t k = 0;
	while (k < nr && rc[k] != NULL)
		k++;
	for (size_t j = k; j < nr; j++)
		if (rc[j] != NULL) {
			errors_reply(out, ERR_VALIDATION, "Query condition missed "
			    "key schema element: %s", rp[k]->name);
			return false;
		}
	for (size_t j = 0; j + 1 < k; j++)
		if (rc[j]->op != EXPR_KEY_EQ) {
			errors_reply(out, ERR_VALIDATION, "Query key condition "
			    "not supported");
			return false;
		}
	*nrc = k;
	return true;
}

/* Each condition's values must have its attribute's type. */
static bool
key_cond_types(const expr_key_cond *const *cs, const key_def *const *defs,
    size_t n, reply *out)
{
	for (size_t i = 0; i < n; i++) {
		int nv = cs[i]->op == EXPR_KEY_BETWEEN ? 2 : 1;
		for (int k = 0; k < nv; k++) {
			if (cs[i]->v[k]->type != defs[i]->type) {
				errors_reply(out, ERR_VALIDATION, "One or more "
				    "parameter values were invalid: Condition "
				    "parameter type does not match schema "
				    "type");
				return false;
			}
		}
		if (cs[i]->op == EXPR_KEY_BEGINS_WITH &&
		    defs[i]->type == VAL_N) {
			errors_reply(out, ERR_VALIDATION, "Invalid "
			    "KeyConditionExpression: Incorrect operand type "
			    "for operator or function; operator or function: "
			    "begins_with, operand type: N");
			return false;
		}
	}
	return true;
}

/*
 * Works out the Query's partition key value and sort-key bounds from the
 * key conditions; false after filling *out with DynamoDB's answer. t is
 * the table read (for a global index, its table; r->gsi its definition).
 */
static bool
query_bounds(api_ctx *c, const table *t, const read_req *r,
    const value **pk_out, bounds *b, reply *out)
{
	expr_key_cond kc[2 * INDEX_KEY_PARTS];
	const key_def *hp[INDEX_KEY_PARTS], *rp[INDEX_KEY_PARTS];
	const expr_key_cond *hc[INDEX_KEY_PARTS] = { NULL };
	const expr_key_cond *rc[INDEX_KEY_PARTS] = { NULL };
	size_t n, nh = 1, nr = t->range.name != NULL, nrc;
	expr_err err;

	if (r->x.key == NULL) {
		errors_reply(out, ERR_VALIDATION, "Either the KeyConditions or "
		    "KeyConditionExpression parameter must be specified in the "
		    "request.");
		return false;
	}
	if (r->gsi != NULL) {
		nh = index_key_parts(r->gsi, false, hp);
		nr = index_key_parts(r->gsi, true, rp);
	} else {
		hp[0] = &t->hash;
		rp[0] = &t->range;
	}
	kv_err rv = expr_key_conditions_max(r->x.key, kc, nh + nr < 2 ? 2 :
	    nh + nr, &n, &err);
	if (rv == KV_EINVAL) {
		errors_reply(out, ERR_VALIDATION, "%s", err.msg);
		return false;
	}
	if (rv != KV_OK)
		return errors_from_kv(out, rv), false;
	if (!match_key_conds(kc, n, hp, nh, rp, nr, hc, rc, &nrc, out) ||
	    !key_cond_types(hc, hp, nh, out) ||
	    !key_cond_types(rc, rp, nrc, out))
		return false;
	const value *hv[INDEX_KEY_PARTS];
	for (size_t j = 0; j < nh; j++) {
		hv[j] = hc[j]->v[0];
		if ((hv[j]->type == VAL_S || hv[j]->type == VAL_B) &&
		    hv[j]->len == 0) {
			errors_reply(out, ERR_VALIDATION, "One or more parameter "
			    "values are not valid. The AttributeValue for a key "
			    "attribute cannot contain an empty %s value. Key: "
			    "%s", hv[j]->type == VAL_S ? "string" : "binary",
			    hp[j]->name);
			return false;
		}
	}
	const value *pk = hv[0];
	if (nh > 1) {
		value *cv = arena_alloc(c->a, sizeof(*cv));
		if (cv == NULL || index_key_compose(hv, nh, c->a, cv) != KV_OK)
			return errors_from_kv(out, KV_ENOMEM), false;
		pk = cv;
	}
	/* The item collection: table | hash | enc(pk), or a local index's
	 * entries of it (core/keyenc.h). */
	sort_space ss = { .cl = KEYENC_PREFIX + (r->local >= 0 ? 2 : 0) +
	    keyenc_value_size(pk), .multi = nr > 1 };
	const expr_key_cond *rk = nrc > 0 ? rc[nrc - 1] : NULL;
	if (ss.multi && nrc > 1) {
		/* The attributes fixed before the last condition. */
		uint8_t *pre;
		for (size_t j = 0; j + 1 < nrc; j++)
			ss.prel += keyenc_value_size(rc[j]->v[0]);
		if ((pre = arena_alloc_raw(c->a, ss.prel)) == NULL)
			return errors_from_kv(out, KV_ENOMEM), false;
		ss.prel = 0;
		for (size_t j = 0; j + 1 < nrc; j++)
			ss.prel += keyenc_value(rc[j]->v[0], pre + ss.prel);
		ss.pre = pre;
	}
	size_t vmax = 0;
	for (int k = 0; rk != NULL && k < 2; k++)
		if (rk->v[k] != NULL && keyenc_value_size(rk->v[k]) > vmax)
			vmax = keyenc_value_size(rk->v[k]);
	size_t room = sort_room(&ss, vmax);
	uint8_t *coll = arena_alloc(c->a, room);
	b->lo = arena_alloc(c->a, room);
	b->hi = arena_alloc(c->a, room);
	uint8_t *k0 = arena_alloc(c->a, room);
	if (coll == NULL || b->lo == NULL || b->hi == NULL || k0 == NULL)
		return errors_from_kv(out, KV_ENOMEM), false;
	keyenc_collection(t->id, r->local, pk, coll);
	ss.coll = coll;
	if (ss.multi && rk != NULL) {
		/* The keys that begin with the fixed attributes. */
		if ((b->lol = sort_bound(c, &ss, NULL, false, b->lo)) == 0)
			return errors_from_kv(out, KV_ENOMEM), false;
	} else {
		memcpy(b->lo, coll, ss.cl);
		b->lol = ss.cl;
	}
	memcpy(b->hi, b->lo, b->lol);
	b->hil = successor(b->hi, b->lol);
	if (rk == NULL)
		goto done;
	/* Sort-key bounds; a key K + 0x00 is the first key after K. */
	bool prefix = rk->op == EXPR_KEY_BEGINS_WITH;
	size_t k0l = sort_bound(c, &ss, rk->v[0], prefix, k0);
	if (k0l == 0)
		return errors_from_kv(out, KV_ENOMEM), false;
	switch (rk->op) {
	case EXPR_KEY_EQ:
	case EXPR_KEY_BEGINS_WITH:
		set_bound(b->lo, &b->lol, k0, k0l, false);
		set_bound(b->hi, &b->hil, k0, k0l, true);
		break;
	case EXPR_KEY_LT:
		set_bound(b->hi, &b->hil, k0, k0l, false);
		break;
	case EXPR_KEY_LE:
		set_bound(b->hi, &b->hil, k0, k0l, true);
		break;
	case EXPR_KEY_GT:
		set_bound(b->lo, &b->lol, k0, k0l, true);
		break;
	case EXPR_KEY_GE:
		set_bound(b->lo, &b->lol, k0, k0l, false);
		break;
	case EXPR_KEY_BETWEEN:
		set_bound(b->lo, &b->lol, k0, k0l, false);
		b->hil = sort_bound(c, &ss, rk->v[1], false, b->hi);
		if (b->hil == 0)
			return errors_from_kv(out, KV_ENOMEM), false;
		b->hil = successor(b->hi, b->hil);
		if (value_cmp(rk->v[0], rk->v[1]) > 0) {
			errors_reply(out, ERR_VALIDATION, "Invalid "
			    "KeyConditionExpression: The BETWEEN operator "
			    "requires upper bound to be greater than or equal "
			    "to lower bound");
			return false;
		}
		break;
	}
done:
	*pk_out = pk;
	return true;
}

bool
ops_query_read(api_ctx *c, json_t *body, query_req *q, reply *out)
{
	bool forward = true;
	read_req *r = &q->r;

	memset(q, 0, sizeof(*q));
	if (!read_common(c, body, REQ_EXPR_KEY | REQ_EXPR_FILTER |
	    REQ_EXPR_PROJECTION, r, out) ||
	    !req_bool(body, "ScanIndexForward", &forward, out) ||
	    !encode_filter(c, r, &q->cond, &q->condl, out))
		return false;
	if (json_object_get(body, "ScanIndexForward") == NULL ||
	    json_is_null(json_object_get(body, "ScanIndexForward")))
		forward = true;
	r->backward = !forward;
	return true;
}

bool
ops_query_route(api_ctx *c, json_t *body, query_req *q, bool *refreshed,
    reply *out)
{
	const value *pk, *epk;
	bounds b;
	read_req *r = &q->r;
	uint8_t *ka = NULL;
	size_t kl = 0;

	route_read_lock();
	const table *t = find_table(c, r->table, refreshed, out);
	const table *qt = t != NULL ? read_table_of(c, t, r,
	    r->consistent, out, false) : NULL;
	if (qt == NULL || !query_bounds(c, qt, r, &pk, &b, out) ||
	    filter_keys_refused(body, qt, r, out) ||
	    (r->has_esk && (ka = esk_storage_key(c, t, qt, r, &epk, &kl,
	    out)) == NULL) ||
	    (r->has_esk && !esk_in_query(r, pk, epk, out))) {
		route_read_unlock();
		return false;
	}
	if (r->has_esk) {
		/* Resume right after the start key, inside the bounds. */
		if (!r->backward) {
			ka[kl] = 0; /* the first key after it */
			if (bytes_cmp(ka, kl + 1, b.lo, b.lol) > 0) {
				b.lo = ka;
				b.lol = kl + 1;
			}
		} else if (bytes_cmp(ka, kl, b.hi, b.hil) < 0) {
			b.hi = ka;
			b.hil = kl;
		}
	}
	const partition *p = table_partition_for(qt, keyenc_hash(pk));
	q->owner = p->node;
	q->tname = arena_dup(c->a, t->name, strlen(t->name));
	q->req = (rpc_request) {
		.op = RPC_RANGE, .table_id = qt->id, .part = p->id,
		.epoch = p->epoch, .range_lo = b.lo, .range_lo_len = b.lol,
		.range_hi = b.hi, .range_hi_len = b.hil,
		.backward = r->backward, .limit = r->limit,
		.max_bytes = PAGE_BYTES, .consistent = r->consistent,
		.condition = q->cond, .condition_len = q->condl,
		.local = local_field(r),
	};
	route_read_unlock();
	if (q->tname == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	return true;
}

int
ops_query_answer(api_ctx *c, query_req *q, kv_err rv, rpc_response *resp,
    reply *out)
{
	page pg = { 0 };
	if (rv == KV_OK)
		rv = take_range(c, &q->r, resp, &pg);
	if (rv == KV_STALE_ROUTE) {
		jtext_fini(&pg.items);
		return -1;
	}
	if (rv != KV_OK) {
		jtext_fini(&pg.items);
		page_failed(c, &pg, q->tname, q->r.index, rv, out);
		return 0;
	}
	route_read_lock();
	const table *now = catalog_find(route_current(c->r), q->tname,
	    strlen(q->tname));
	const table *qt = now != NULL ? read_table_of(c, now, &q->r,
	    false, out, true) : NULL;
	if (qt == NULL)
		req_table_missing(out);
	else
		reply_page(&q->r, now, qt, &pg, out);
	route_read_unlock();
	jtext_fini(&pg.items);
	return 1;
}

void
ops_read_query(api_ctx *c, json_t *body, reply *out)
{
	query_req q;
	bool refreshed = false;

	if (!ops_query_read(c, body, &q, out))
		return;
	for (int attempt = 0; attempt < ROUTE_STALE_RETRIES; attempt++) {
		rpc_response resp;
		if (!ops_query_route(c, body, &q, &refreshed, out))
			return;
		kv_err rv = conn_call(c->r, q.owner, &q.req, c->a, &resp);
		if (ops_query_answer(c, &q, rv, &resp, out) >= 0)
			return;
		route_stale(c->r, attempt);
		refreshed = true;
	}
	errors_reply(out, ERR_UNAVAILABLE,
	    "The partition map kept changing; try again");
}

void
ops_read_scan(api_ctx *c, json_t *body, reply *out)
{
	read_req r;
	bool refreshed = false;
	const uint8_t *cond;
	size_t condl;
	json_t *seg_j, *tot_j;
	req_errors e = { 0 };

	if (!read_common(c, body, REQ_EXPR_FILTER | REQ_EXPR_SCAN |
	    REQ_EXPR_PROJECTION, &r, out) ||
	    !req_integer(body, "Segment", &seg_j, out) ||
	    !req_integer(body, "TotalSegments", &tot_j, out) ||
	    !encode_filter(c, &r, &cond, &condl, out))
		return;
	if (tot_j != NULL && (json_integer_value(tot_j) < 1 ||
	    json_integer_value(tot_j) > 1000000))
		req_errors_add(&e, "Value '%lld' at 'totalSegments' failed to "
		    "satisfy constraint: Member must have value %s",
		    (long long) json_integer_value(tot_j),
		    json_integer_value(tot_j) < 1 ?
		    "greater than or equal to 1" :
		    "less than or equal to 1000000");
	if (seg_j != NULL && (json_integer_value(seg_j) < 0 ||
	    json_integer_value(seg_j) > 999999))
		req_errors_add(&e, "Value '%lld' at 'segment' failed to "
		    "satisfy constraint: Member must have value %s",
		    (long long) json_integer_value(seg_j),
		    json_integer_value(seg_j) < 0 ?
		    "greater than or equal to 0" :
		    "less than or equal to 999999");
	if (req_errors_reply(&e, out))
		return;
	if ((seg_j == NULL) != (tot_j == NULL)) {
		errors_reply(out, ERR_VALIDATION, "The TotalSegments parameter "
		    "is required but was not present in the request when "
		    "Segment parameter is present");
		if (tot_j != NULL)
			errors_reply(out, ERR_VALIDATION, "The Segment "
			    "parameter is required but was not present in the "
			    "request when parameter TotalSegments is present");
		return;
	}
	if (tot_j != NULL) {
		r.segment = (uint32_t) json_integer_value(seg_j);
		r.total_segments = (uint32_t) json_integer_value(tot_j);
		if (r.segment >= r.total_segments) {
			errors_reply(out, ERR_VALIDATION, "The Segment parameter "
			    "is zero-based and must be less than parameter "
			    "TotalSegments: Segment: %u is not less than "
			    "TotalSegments: %u", r.segment, r.total_segments);
			return;
		}
	}
	/* The segment's hash slice [hlo, hlast]. */
	uint64_t hlo = 0, hlast = UINT64_MAX;
	if (r.total_segments > 0) {
		hlo = (uint64_t) (((unsigned __int128) r.segment << 64) /
		    r.total_segments);
		if (r.segment + 1 < r.total_segments)
			hlast = (uint64_t) ((((unsigned __int128)
			    (r.segment + 1)) << 64) / r.total_segments) - 1;
	}

	page pg = { 0 };
	uint8_t *start = NULL;  /* resume key (inclusive), NULL: none */
	size_t startl = 0;
	char *tname = NULL;
	for (int attempt = 0; attempt < ROUTE_STALE_RETRIES; attempt++) {
		route_read_lock();
		const table *t = find_table(c, r.table, &refreshed, out);
		const table *qt = t != NULL ? read_table_of(c, t, &r,
		    r.consistent, out, false) : NULL;
		const value *epk;
		size_t kl = 0;
		if (qt == NULL || (r.has_esk && start == NULL &&
		    (start = esk_storage_key(c, t, qt, &r, &epk, &kl,
		    out)) == NULL)) {
			route_read_unlock();
			jtext_fini(&pg.items);
			return;
		}
		tname = arena_dup(c->a, t->name, strlen(t->name));
		if (r.has_esk && startl == 0) {
			start[kl] = 0; /* the first key after it */
			startl = kl + 1;
			uint64_t h = keyenc_key_hash(start);
			if (h < hlo || h > hlast) {
				route_read_unlock();
				jtext_fini(&pg.items);
				errors_reply(out, ERR_VALIDATION, "The provided "
				    "starting key is invalid: The provided key "
				    "is outside the range of the segment");
				return;
			}
		}
		/* Copy the partitions: the walk makes node calls. */
		size_t np = qt->n_parts;
		partition *parts = arena_alloc(c->a, np * sizeof(*parts));
		memcpy(parts, qt->parts, np * sizeof(*parts));
		uint32_t tid = qt->id;
		route_read_unlock();

		kv_err rv = KV_OK;
		for (size_t i = 0; i < np && !pg.stopped; i++) {
			const partition *p = &parts[i];
			if (p->last < hlo || p->lo > hlast)
				continue;
			/* A keyed group is read through its first member. */
			if (p->keyed && p->kfrom_len > 0)
				continue;
			uint64_t from = p->lo > hlo ? p->lo : hlo;
			uint64_t to = p->last < hlast ? p->last : hlast;
			uint8_t lo[KEYENC_PREFIX], hi[KEYENC_PREFIX];
			const uint8_t *lop = lo;
			size_t lol = KEYENC_PREFIX, hil = KEYENC_PREFIX;
			keyenc_range_prefix(tid, from, lo);
			if (to == UINT64_MAX) {
				keyenc_table_prefix(tid + 1, hi);
				hil = 4;
			} else {
				keyenc_range_prefix(tid, to + 1, hi);
			}
			if (start != NULL) {
				uint64_t h = keyenc_key_hash(start);
				if (h > to)
					continue; /* before the resume point */
				if (h >= from) {
					lop = start;
					lol = startl;
				}
			}
			rv = read_part(c, &r, cond, condl, tid, p, lop, lol, hi,
			    hil, &pg);
			if (rv != KV_OK)
				break;
			/*
			 * A retry after a stale route resumes where this
			 * partition ended (a full 12-byte key prefix).
			 */
			if (!pg.stopped) {
				if (to == UINT64_MAX)
					break;
				start = arena_alloc(c->a, hil);
				memcpy(start, hi, hil);
				startl = hil;
			}
			if (pg.read_bytes >= PAGE_BYTES ||
			    (r.limit != 0 && pg.scanned >= r.limit))
				break;
		}
		if (rv == KV_STALE_ROUTE) {
			/* Continue from where this attempt got to. */
			route_stale(c->r, attempt);
			refreshed = true;
			continue;
		}
		if (rv != KV_OK) {
			jtext_fini(&pg.items);
			page_failed(c, &pg, tname, r.index, rv, out);
			return;
		}
		route_read_lock();
		t = catalog_find(route_current(c->r), tname, strlen(tname));
		qt = t != NULL ? read_table_of(c, t, &r, false, out,
		    true) : NULL;
		if (qt == NULL) {
			route_read_unlock();
			jtext_fini(&pg.items);
			req_table_missing(out);
			return;
		}
		reply_page(&r, t, qt, &pg, out);
		route_read_unlock();
		jtext_fini(&pg.items);
		return;
	}
	jtext_fini(&pg.items);
	errors_reply(out, ERR_UNAVAILABLE,
	    "The partition map kept changing; try again");
}
