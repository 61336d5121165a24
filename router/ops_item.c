/*
 * ops_item.c — PutItem, GetItem and DeleteItem.
 *
 * Each request is checked completely before anything is sent (JSON shape,
 * attribute values, key schema, sizes), so a bad request never reaches a
 * node. The item's partition comes from the catalog snapshot; a node that
 * answers KV_STALE_ROUTE makes the router refresh its catalog and retry.
 * Expressions beyond a plain list of projected names arrive with the
 * expression library; until then requests that carry them are refused
 * rather than applied without their conditions.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "codec.h"
#include "conn.h"
#include "errors.h"
#include "item.h"
#include "json.h"
#include "keyenc.h"
#include "request.h"
#include "route.h"

#define STALE_RETRIES 8

/* Finds the key of the request in a table; false after filling *out. */
typedef bool (*key_fn)(const table *t, const value *v, const value **pk,
    const value **sk, reply *out);

/*
 * Sends req (op, item, return_values already set) to the owner of the
 * item's partition. Returns true with *resp filled (wire_response_fini it),
 * or false after filling *out.
 */
static bool
item_call(api_ctx *c, const char *name, const value *v, key_fn fn,
    rpc_request *req, rpc_response *resp, reply *out)
{
	bool refreshed = false;

	for (int attempt = 0; attempt < STALE_RETRIES; attempt++) {
		const value *pk, *sk;
		uint8_t *key;
		size_t klen;

		route_read_lock();
		const table *t = catalog_find(route_current(c->r), name,
		    strlen(name));
		if (t == NULL || t->status != TABLE_ACTIVE) {
			route_read_unlock();
			if (!refreshed) {
				refreshed = true;
				route_refresh(c->r);
				continue;
			}
			req_table_missing(out);
			return false;
		}
		if (!fn(t, v, &pk, &sk, out)) {
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
		uint32_t owner = p->node;
		route_read_unlock();
		if (req->key == NULL) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}

		kv_err rv = conn_call(c->r, owner, req, c->a, resp);
		if (rv != KV_OK) {
			errors_from_kv(out, rv);
			return false;
		}
		if (resp->code == KV_STALE_ROUTE) {
			wire_response_fini(resp);
			route_refresh(c->r);
			refreshed = true;
			usleep((useconds_t) attempt * 5000);
			continue;
		}
		if (resp->code != KV_OK) {
			errors_from_kv(out, resp->code);
			wire_response_fini(resp);
			return false;
		}
		return true;
	}
	errors_reply(out, ERR_UNAVAILABLE,
	    "The partition map kept changing; try again");
	return false;
}

/* Common members: TableName, and refusal of not-yet-supported ones. */
static bool
read_table_name(json_t *body, const char **name, reply *out)
{
	req_errors e = { 0 };
	if (!req_string(body, "TableName", name, out))
		return false;
	req_check_table_name(&e, *name, "tableName");
	return !req_errors_reply(&e, out);
}

static bool
refuse_unsupported(json_t *body, const char *const *members, reply *out)
{
	for (size_t i = 0; members[i] != NULL; i++) {
		if (json_object_get(body, members[i]) != NULL) {
			errors_reply(out, ERR_VALIDATION,
			    "%s is not supported by this cluster yet",
			    members[i]);
			return true;
		}
	}
	return false;
}

static const char *const write_unsupported[] = {
	"ConditionExpression", "Expected", "ConditionalOperator",
	"ExpressionAttributeValues", "ExpressionAttributeNames", NULL,
};

/*
 * ReturnValues of PutItem and DeleteItem: NONE or ALL_OLD; the other
 * values of the enum are refused as DynamoDB refuses them.
 */
static bool
read_return_values(json_t *body, rpc_return *rv, reply *out)
{
	const char *s;
	*rv = RPC_RETURN_NONE;
	if (!req_string(body, "ReturnValues", &s, out))
		return false;
	if (s == NULL || strcmp(s, "NONE") == 0)
		return true;
	if (strcmp(s, "ALL_OLD") == 0) {
		*rv = RPC_RETURN_ALL_OLD;
		return true;
	}
	if (strcmp(s, "ALL_NEW") == 0 || strcmp(s, "UPDATED_OLD") == 0 ||
	    strcmp(s, "UPDATED_NEW") == 0) {
		errors_reply(out, ERR_VALIDATION,
		    "ReturnValues can only be ALL_OLD or NONE");
		return false;
	}
	errors_reply(out, ERR_VALIDATION,
	    "1 validation error detected: Value '%s' at 'returnValues' "
	    "failed to satisfy constraint: Member must satisfy enum value "
	    "set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]", s);
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

/* Replies with {} or {"<field>": item} for the item in resp. */
static void
reply_item(api_ctx *c, const rpc_response *resp, const char *field,
    const value *(*filter)(api_ctx *, const value *, void *), void *arg,
    reply *out)
{
	json_t *j = json_object();
	value item;
	if (j == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return;
	}
	if (resp->found && resp->item != NULL) {
		if (codec_decode(c->a, resp->item, resp->item_len, &item) !=
		    KV_OK) {
			json_decref(j);
			errors_from_kv(out, KV_CORRUPT);
			return;
		}
		const value *shown = filter != NULL ? filter(c, &item, arg) :
		    &item;
		if (shown == NULL ||
		    json_object_set_new(j, field, json_from_item(shown)) != 0) {
			json_decref(j);
			errors_from_kv(out, KV_ENOMEM);
			return;
		}
	}
	api_reply_json(out, j);
}

void
ops_item_put(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	value item;
	rpc_request req = { .op = RPC_PUT };
	rpc_response resp;
	uint8_t *bytes;
	size_t len;

	if (!read_table_name(body, &name, out) ||
	    refuse_unsupported(body, write_unsupported, out) ||
	    !read_return_values(body, &req.return_values, out) ||
	    !read_item(c, body, "Item", "item", &item, out))
		return;
	if (item_size(&item) > ITEM_MAX_SIZE) {
		errors_reply(out, ERR_VALIDATION,
		    "Item size has exceeded the maximum allowed size");
		return;
	}
	if (codec_encode(&item, &bytes, &len) != KV_OK) {
		errors_from_kv(out, KV_ENOMEM);
		return;
	}
	req.item = (const uint8_t *) arena_dup(c->a, bytes, len);
	req.item_len = len;
	free(bytes);
	if (req.item == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return;
	}
	if (!item_call(c, name, &item, req_item_key, &req, &resp, out))
		return;
	reply_item(c, &resp, "Attributes", NULL, NULL, out);
	wire_response_fini(&resp);
}

void
ops_item_delete(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	value key;
	rpc_request req = { .op = RPC_DELETE };
	rpc_response resp;

	if (!read_table_name(body, &name, out) ||
	    refuse_unsupported(body, write_unsupported, out) ||
	    !read_return_values(body, &req.return_values, out) ||
	    !read_item(c, body, "Key", "key", &key, out))
		return;
	if (!item_call(c, name, &key, req_key, &req, &resp, out))
		return;
	reply_item(c, &resp, "Attributes", NULL, NULL, out);
	wire_response_fini(&resp);
}

/* The names GetItem should return; n == 0 means every attribute. */
typedef struct projection {
	const char **names;
	size_t *lens;
	size_t n;
} projection;

static const value *
project(api_ctx *c, const value *item, void *arg)
{
	const projection *p = arg;
	if (p->n == 0)
		return item;
	value *v = arena_alloc(c->a, sizeof(*v));
	attr *attrs = arena_alloc(c->a, (item->len + 1) * sizeof(attr));
	if (v == NULL || attrs == NULL)
		return NULL;
	v->type = VAL_M;
	v->u.attrs = attrs;
	for (size_t i = 0; i < item->len; i++) {
		const attr *a = &item->u.attrs[i];
		for (size_t k = 0; k < p->n; k++) {
			if (p->lens[k] == a->name_len &&
			    memcmp(p->names[k], a->name, a->name_len) == 0) {
				attrs[v->len++] = *a;
				break;
			}
		}
	}
	return v;
}

/*
 * Reads ProjectionExpression (a comma-separated list of top-level names or
 * #placeholders) or the legacy AttributesToGet into *p. Nested paths come
 * with the expression library.
 */
static bool
read_projection(api_ctx *c, json_t *body, projection *p, reply *out)
{
	const char *expr;
	json_t *names, *atg;

	memset(p, 0, sizeof(*p));
	if (!req_string(body, "ProjectionExpression", &expr, out) ||
	    !req_object(body, "ExpressionAttributeNames", &names, out) ||
	    !req_array(body, "AttributesToGet", &atg, out))
		return false;
	if (expr != NULL && atg != NULL) {
		errors_reply(out, ERR_VALIDATION,
		    "Can not use both expression and non-expression "
		    "parameters in the same request: Non-expression "
		    "parameters: {AttributesToGet} Expression parameters: "
		    "{ProjectionExpression}");
		return false;
	}
	if (names != NULL && expr == NULL) {
		errors_reply(out, ERR_VALIDATION,
		    "ExpressionAttributeNames can only be specified when "
		    "using expressions");
		return false;
	}
	if (json_object_get(body, "ExpressionAttributeValues") != NULL) {
		errors_reply(out, ERR_VALIDATION,
		    "ExpressionAttributeValues can only be specified when "
		    "using expressions: ProjectionExpression does not use "
		    "them");
		return false;
	}
	size_t cap = atg != NULL ? json_array_size(atg) : 1;
	if (expr != NULL)
		for (const char *s = expr; *s != '\0'; s++)
			cap += *s == ',';
	p->names = arena_alloc(c->a, (cap + 1) * sizeof(*p->names));
	p->lens = arena_alloc(c->a, (cap + 1) * sizeof(*p->lens));
	if (p->names == NULL || p->lens == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	if (atg != NULL) {
		size_t i;
		json_t *e;
		json_array_foreach(atg, i, e) {
			if (!json_is_string(e)) {
				errors_reply(out, ERR_SERIALIZATION,
				    "Unexpected value type in payload for "
				    "member AttributesToGet");
				return false;
			}
			p->names[p->n] = json_string_value(e);
			p->lens[p->n++] = json_string_length(e);
		}
		return true;
	}
	if (expr == NULL)
		return true;
	/* Track which #names were used, to refuse unused ones. */
	size_t n_names = names != NULL ? json_object_size(names) : 0;
	bool *used = arena_alloc(c->a, n_names + 1);
	const char *s = expr;
	while (true) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		const char *start = s;
		while (*s != '\0' && *s != ',' && *s != ' ' && *s != '\t' &&
		    *s != '\n')
			s++;
		size_t len = (size_t) (s - start);
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (len == 0 || (*s != ',' && *s != '\0') ||
		    memchr(start, '.', len) != NULL ||
		    memchr(start, '[', len) != NULL) {
			errors_reply(out, ERR_VALIDATION,
			    "Invalid ProjectionExpression: only lists of "
			    "top-level attribute names are supported by this "
			    "cluster yet: \"%s\"", expr);
			return false;
		}
		if (start[0] == '#') {
			const char *key;
			json_t *val;
			bool found = false;
			size_t i = 0;
			json_object_foreach(names, key, val) {
				if (strlen(key) == len &&
				    memcmp(key, start, len) == 0) {
					if (!json_is_string(val)) {
						errors_reply(out,
						    ERR_SERIALIZATION,
						    "Unexpected value type in "
						    "payload for member "
						    "ExpressionAttributeNames");
						return false;
					}
					p->names[p->n] = json_string_value(val);
					p->lens[p->n++] =
					    json_string_length(val);
					used[i] = true;
					found = true;
				}
				i++;
			}
			if (!found) {
				errors_reply(out, ERR_VALIDATION,
				    "Invalid ProjectionExpression: An "
				    "expression attribute name used in the "
				    "document path is not defined; attribute "
				    "name: %.*s", (int) len, start);
				return false;
			}
		} else {
			p->names[p->n] = start;
			p->lens[p->n++] = len;
		}
		if (*s == '\0')
			break;
		s++;
	}
	size_t i = 0;
	const char *key;
	json_t *val;
	json_object_foreach(names, key, val) {
		if (!used[i]) {
			errors_reply(out, ERR_VALIDATION,
			    "Value provided in ExpressionAttributeNames unused "
			    "in expressions: keys: {%s}", key);
			return false;
		}
		i++;
	}
	return true;
}

void
ops_item_get(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	value key;
	rpc_request req = { .op = RPC_GET };
	rpc_response resp;
	projection proj;
	bool consistent;

	if (!read_table_name(body, &name, out) ||
	    !req_bool(body, "ConsistentRead", &consistent, out) ||
	    !read_projection(c, body, &proj, out) ||
	    !read_item(c, body, "Key", "key", &key, out))
		return;
	req.consistent = consistent;
	if (!item_call(c, name, &key, req_key, &req, &resp, out))
		return;
	reply_item(c, &resp, "Item", project, &proj, out);
	wire_response_fini(&resp);
}
