/*
 * request.c — shared parsing of request fields (see request.h).
 *
 * DynamoDB checks request members in two layers: the coral framework's
 * shape checks ("1 validation error detected: Value 'x' at 'tableName'
 * failed to satisfy constraint: ...") and the service's own checks ("One
 * or more parameter values were invalid: ..."). Both are
 * ValidationExceptions; the wording follows DynamoDB's.
 */
#include "request.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "capacity.h"
#include "errors.h"
#include "item.h"

void
req_errors_add(req_errors *e, const char *fmt, ...)
{
	size_t used = strlen(e->buf);
	va_list ap;
	if (e->n > 0 && used + 2 < sizeof(e->buf)) {
		strcat(e->buf, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(e->buf + used, sizeof(e->buf) - used, fmt, ap);
	va_end(ap);
	e->n++;
}

bool
req_errors_reply(const req_errors *e, reply *out)
{
	if (e->n == 0)
		return false;
	errors_reply(out, ERR_VALIDATION, "%d validation error%s detected: %s",
	    e->n, e->n == 1 ? "" : "s", e->buf);
	return true;
}

static bool
wrong_type(const char *field, reply *out)
{
	errors_reply(out, ERR_SERIALIZATION,
	    "Unexpected value type in payload for member %s", field);
	return false;
}

bool
req_string(json_t *body, const char *field, const char **v, reply *out)
{
	json_t *j = json_object_get(body, field);
	*v = NULL;
	if (j == NULL || json_is_null(j))
		return true;
	if (!json_is_string(j))
		return wrong_type(field, out);
	*v = json_string_value(j);
	if (strlen(*v) != json_string_length(j)) {
		/* Names, enumerations and expressions never hold NUL. */
		errors_reply(out, ERR_VALIDATION,
		    "1 validation error detected: Value at '%s' failed to "
		    "satisfy constraint: Member must not contain the NUL "
		    "character", field);
		return false;
	}
	return true;
}

bool
req_object(json_t *body, const char *field, json_t **v, reply *out)
{
	json_t *j = json_object_get(body, field);
	*v = NULL;
	if (j == NULL || json_is_null(j))
		return true;
	if (!json_is_object(j))
		return wrong_type(field, out);
	*v = j;
	return true;
}

bool
req_array(json_t *body, const char *field, json_t **v, reply *out)
{
	json_t *j = json_object_get(body, field);
	*v = NULL;
	if (j == NULL || json_is_null(j))
		return true;
	if (!json_is_array(j))
		return wrong_type(field, out);
	*v = j;
	return true;
}

bool
req_bool(json_t *body, const char *field, bool *v, reply *out)
{
	json_t *j = json_object_get(body, field);
	*v = false;
	if (j == NULL || json_is_null(j))
		return true;
	if (!json_is_boolean(j))
		return wrong_type(field, out);
	*v = json_is_true(j);
	return true;
}

bool
req_integer(json_t *body, const char *field, json_t **v, reply *out)
{
	json_t *j = json_object_get(body, field);
	*v = NULL;
	if (j == NULL || json_is_null(j))
		return true;
	if (!json_is_integer(j))
		return wrong_type(field, out);
	*v = j;
	return true;
}

void
req_check_table_name(req_errors *e, const char *name, const char *member)
{
	if (name == NULL) {
		req_errors_add(e, "Value null at '%s' failed to satisfy "
		    "constraint: Member must not be null", member);
		return;
	}
	size_t n = strlen(name);
	bool pattern = n > 0;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		    ch == '-'))
			pattern = false;
	}
	if (!pattern)
		req_errors_add(e, "Value '%s' at '%s' failed to satisfy "
		    "constraint: Member must satisfy regular expression "
		    "pattern: [a-zA-Z0-9_.-]+", name, member);
	if (n < 3)
		req_errors_add(e, "Value '%s' at '%s' failed to satisfy "
		    "constraint: Member must have length greater than or "
		    "equal to 3", name, member);
	if (n > 255)
		req_errors_add(e, "Value '%s' at '%s' failed to satisfy "
		    "constraint: Member must have length less than or "
		    "equal to 255", name, member);
}

bool
req_check_billing_mode(req_errors *e, const char *billing, const char *member)
{
	if (billing == NULL)
		return false;
	if (strcmp(billing, "PROVISIONED") == 0 ||
	    strcmp(billing, "PAY_PER_REQUEST") == 0)
		return true;
	req_errors_add(e, "Value '%s' at '%s' failed to satisfy constraint: "
	    "Member must satisfy enum value set: [PROVISIONED, "
	    "PAY_PER_REQUEST]", billing, member);
	return false;
}

void
req_check_length(req_errors *e, const char *v, size_t min, size_t max,
    const char *member)
{
	/*
	 * Coral counts characters; DynamoDB also refuses a key name of more
	 * than 255 bytes that has fewer characters (the Constraints page:
	 * "the total encoded size of each name cannot exceed 255 bytes"),
	 * with words not found. Bytes it is, with Coral's message.
	 */
	size_t n = strlen(v);
	if (n < min)
		req_errors_add(e, "Value '%s' at '%s' failed to satisfy "
		    "constraint: Member must have length greater than or "
		    "equal to %zu", v, member, min);
	if (n > max)
		req_errors_add(e, "Value '%s' at '%s' failed to satisfy "
		    "constraint: Member must have length less than or equal "
		    "to %zu", v, member, max);
}

bool
req_attributes_to_get(json_t *body, const char *member, req_errors *e,
    json_t **atg, reply *out)
{
	if (!req_array(body, "AttributesToGet", atg, out))
		return false;
	/* DynamoDB prints the empty list as '[]' (dynalite's tests). */
	if (*atg != NULL && json_array_size(*atg) == 0)
		req_errors_add(e, "Value '[]' at '%s' failed to satisfy "
		    "constraint: Member must have length greater than or equal "
		    "to 1", member);
	return true;
}

/* Empty key values and oversized keys, common to both key checks. */
static bool
check_key_value(const key_def *k, const value *v, bool is_hash, reply *out)
{
	if ((v->type == VAL_S || v->type == VAL_B) && v->len == 0) {
		errors_reply(out, ERR_VALIDATION,
		    "One or more parameter values are not valid. The "
		    "AttributeValue for a key attribute cannot contain an "
		    "empty %s value. Key: %s",
		    v->type == VAL_S ? "string" : "binary", k->name);
		return false;
	}
	size_t size = item_value_size(v);
	if (is_hash && size > ITEM_MAX_HASH_KEY) {
		errors_reply(out, ERR_VALIDATION,
		    "One or more parameter values were invalid: Size of "
		    "hashkey has exceeded the maximum size limit of2048 "
		    "bytes");
		return false;
	}
	if (!is_hash && size > ITEM_MAX_RANGE_KEY) {
		errors_reply(out, ERR_VALIDATION,
		    "One or more parameter values were invalid: Aggregated "
		    "size of all range keys has exceeded the size limit of "
		    "1024 bytes");
		return false;
	}
	return true;
}

static bool
item_key_attr(const key_def *k, const value *item, bool is_hash,
    const value **out_v, reply *out)
{
	const value *v = item_attr(item, k->name, strlen(k->name));
	if (v == NULL) {
		errors_reply(out, ERR_VALIDATION,
		    "One or more parameter values were invalid: Missing the "
		    "key %s in the item", k->name);
		return false;
	}
	if (v->type != k->type) {
		errors_reply(out, ERR_VALIDATION,
		    "One or more parameter values were invalid: Type "
		    "mismatch for key %s expected: %s actual: %s", k->name,
		    value_type_name(k->type), value_type_name(v->type));
		return false;
	}
	if (!check_key_value(k, v, is_hash, out))
		return false;
	*out_v = v;
	return true;
}

bool
req_item_key(const table *t, const value *item, const value **pk,
    const value **sk, reply *out)
{
	*pk = *sk = NULL;
	if (!item_key_attr(&t->hash, item, true, pk, out))
		return false;
	if (t->range.name != NULL &&
	    !item_key_attr(&t->range, item, false, sk, out))
		return false;
	return true;
}

bool
req_key(const table *t, const value *key, const value **pk,
    const value **sk, reply *out)
{
	size_t want = t->range.name != NULL ? 2 : 1;
	const value *h = item_attr(key, t->hash.name, strlen(t->hash.name));
	const value *r = t->range.name != NULL ?
	    item_attr(key, t->range.name, strlen(t->range.name)) : NULL;
	if (key->len != want || h == NULL || h->type != t->hash.type ||
	    (want == 2 && (r == NULL || r->type != t->range.type))) {
		errors_reply(out, ERR_VALIDATION,
		    "The provided key element does not match the schema");
		return false;
	}
	if (!check_key_value(&t->hash, h, true, out) ||
	    (r != NULL && !check_key_value(&t->range, r, false, out)))
		return false;
	*pk = h;
	*sk = r;
	return true;
}

bool
req_capacity(json_t *body, const char **mode, reply *out)
{
	if (!req_string(body, "ReturnConsumedCapacity", mode, out))
		return false;
	if (*mode == NULL || strcmp(*mode, "NONE") == 0) {
		*mode = NULL;
		return true;
	}
	if (strcmp(*mode, "TOTAL") == 0 || strcmp(*mode, "INDEXES") == 0)
		return true;
	errors_reply(out, ERR_VALIDATION, "1 validation error detected: Value "
	    "'%s' at 'returnConsumedCapacity' failed to satisfy constraint: "
	    "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]",
	    *mode);
	return false;
}

bool
req_metrics_mode(json_t *body, bool *size, reply *out)
{
	const char *s;
	*size = false;
	if (!req_string(body, "ReturnItemCollectionMetrics", &s, out))
		return false;
	if (s == NULL || strcmp(s, "NONE") == 0)
		return true;
	if (strcmp(s, "SIZE") == 0) {
		*size = true;
		return true;
	}
	errors_reply(out, ERR_VALIDATION, "1 validation error detected: Value "
	    "'%s' at 'returnItemCollectionMetrics' failed to satisfy "
	    "constraint: Member must satisfy enum value set: [SIZE, NONE]", s);
	return false;
}

json_t *
req_collection_metrics(const table *t, const value *item, uint64_t bytes)
{
	const value *pk = item_attr(item, t->hash.name, strlen(t->hash.name));
	if (pk == NULL)
		return NULL;
	/* Whole gigabytes below and above: [0.0, 1.0] for any collection
	 * under 1 GB, as DynamoDB answers for small ones. */
	double lo = (double) (bytes >> 30);
	json_t *key = json_object();
	json_object_set_new(key, t->hash.name, json_from_value(pk));
	return json_pack("{s:o,s:[f,f]}", "ItemCollectionKey", key,
	    "SizeEstimateRangeGB", lo, lo + 1.0);
}

void
req_collection_metrics_add(json_t *map, const table *t, const value *item,
    uint64_t bytes)
{
	json_t *m = req_collection_metrics(t, item, bytes);
	if (m == NULL)
		return;
	json_t *l = json_object_get(map, t->name);
	if (l == NULL) {
		l = json_array();
		json_object_set_new(map, t->name, l);
	}
	json_array_append_new(l, m);
}

/* The ConsumedCapacity object (new reference, or NULL) for mode. */
static json_t *
consumed(const char *mode, const char *name, uint64_t half)
{
	double cu = capacity_to_double(half);
	json_t *cc = json_pack("{s:s,s:f}", "TableName", name,
	    "CapacityUnits", cu);
	if (cc != NULL && strcmp(mode, "INDEXES") == 0)
		json_object_set_new(cc, "Table", json_pack("{s:f}",
		    "CapacityUnits", cu));
	return cc;
}

void
req_consumed(json_t *j, const char *mode, const char *name, uint64_t half)
{
	if (mode != NULL)
		json_object_set_new(j, "ConsumedCapacity",
		    consumed(mode, name, half));
}

void
req_consumed_text(jtext *t, const char *mode, const char *name,
    uint64_t half)
{
	if (mode == NULL)
		return;
	json_t *cc = consumed(mode, name, half);
	jtext_member(t, "ConsumedCapacity");
	jtext_json(t, cc);
	json_decref(cc);
}

json_t *
req_consumed_object(const char *mode, const char *name, uint64_t half,
    const char *const *names, const uint64_t *ihalf, const bool *local,
    size_t n)
{
	static const char *const kinds[2] = { "GlobalSecondaryIndexes",
	    "LocalSecondaryIndexes" };
	uint64_t total = half;
	for (size_t i = 0; i < n; i++)
		total += ihalf[i];
	json_t *cc = json_pack("{s:s,s:f}", "TableName", name,
	    "CapacityUnits", capacity_to_double(total));
	if (cc != NULL && strcmp(mode, "INDEXES") == 0) {
		json_object_set_new(cc, "Table", json_pack("{s:f}",
		    "CapacityUnits", capacity_to_double(half)));
		for (size_t i = 0; i < n; i++) {
			const char *kind = kinds[local != NULL && local[i]];
			json_t *g = json_object_get(cc, kind);
			if (g == NULL) {
				g = json_object();
				json_object_set_new(cc, kind, g);
			}
			json_object_set_new(g, names[i], json_pack("{s:f}",
			    "CapacityUnits", capacity_to_double(ihalf[i])));
		}
	}
	return cc;
}

void
req_consumed_indexes(jtext *t, const char *mode, const char *name,
    uint64_t half, const char *const *names, const uint64_t *ihalf,
    const bool *local, size_t n)
{
	if (mode == NULL)
		return;
	json_t *cc = req_consumed_object(mode, name, half, names, ihalf,
	    local, n);
	jtext_member(t, "ConsumedCapacity");
	jtext_json(t, cc);
	json_decref(cc);
}

void
req_table_missing(reply *out)
{
	errors_reply(out, ERR_RESOURCE_NOT_FOUND,
	    "Requested resource not found");
}
