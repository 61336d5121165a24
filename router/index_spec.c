/*
 * index_spec.c — the secondary indexes of CreateTable and the
 * GlobalSecondaryIndexUpdates of UpdateTable: reading, DynamoDB's checks,
 * and their TableDescription entries (see index_spec.h).
 *
 * DynamoDB checks in two layers and so does this file. The shape of each
 * index (name, key schema length, enumerations, throughput minimums) is
 * collected with the rest of the request's violations; the service's own
 * checks run after the table's key schema passed (CreateTable) or once the
 * table is known (UpdateTable), in DynamoDB's order as far as it is known.
 * One function, check_index, checks one index definition for both
 * requests; only the messages about a GSI's throughput differ between
 * them. The messages are DynamoDB's; where a source gave the words but not
 * the place in the order, the order is ours and says so.
 */
#include "index_spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "index_key.h"

#define MAX_PROVISIONED 1000000000000LL
#define MAX_NONKEY 20 /* NonKeyAttributes of one index (a shape limit) */

#define INVALID "One or more parameter values were invalid: "
/* A GSI's KeySchema: up to INDEX_KEY_PARTS HASH elements, then as many
 * RANGE elements (multi-attribute keys); an LSI's has two. */
#define MAX_KEY_ELEMS (2 * INDEX_KEY_PARTS)

/* One index of the request as read; strings borrowed from the JSON. */
typedef struct index_req {
	const char *name;
	bool local;
	size_t pos;               /* 1-based, within its list */
	const char *at;           /* its member path, for the violations:
	                           * "globalSecondaryIndexes.1.member" */
	size_t nk;                /* KeySchema elements (kn/kt: the first
	                           * MAX_KEY_ELEMS) */
	const char *kn[MAX_KEY_ELEMS], *kt[MAX_KEY_ELEMS];
	const char *ptype;        /* ProjectionType; NULL when absent */
	json_t *nonkey;           /* NonKeyAttributes; NULL when absent */
	bool has_pt;              /* a GSI's ProvisionedThroughput given */
	json_int_t rcu, wcu;
} index_req;

bool
index_spec_read_throughput(json_t *pt, const char *member, req_errors *e,
    json_int_t *rcu, json_int_t *wcu, reply *out)
{
	/* DynamoDB lists the write units' violations first. */
	static const char *const f[2] = { "WriteCapacityUnits",
		"ReadCapacityUnits" };
	static const char *const m[2] = { "writeCapacityUnits",
		"readCapacityUnits" };
	json_int_t *dst[2] = { wcu, rcu };
	for (int i = 0; i < 2; i++) {
		json_t *v;
		*dst[i] = 0;
		if (!req_integer(pt, f[i], &v, out))
			return false;
		if (v == NULL) {
			req_errors_add(e, "Value null at '%s.%s' failed to "
			    "satisfy constraint: Member must not be null",
			    member, m[i]);
			continue;
		}
		*dst[i] = json_integer_value(v);
		if (*dst[i] < 1)
			req_errors_add(e, "Value '%lld' at '%s.%s' failed to "
			    "satisfy constraint: Member must have value "
			    "greater than or equal to 1",
			    (long long) *dst[i], member, m[i]);
	}
	return true;
}

bool
index_spec_throughput_in_bounds(json_int_t rcu, json_int_t wcu, reply *out)
{
	if (rcu <= MAX_PROVISIONED && wcu <= MAX_PROVISIONED)
		return true;
	errors_reply(out, ERR_VALIDATION, "Given value %lld for %s is out of "
	    "bounds", (long long) (rcu > MAX_PROVISIONED ? rcu : wcu),
	    rcu > MAX_PROVISIONED ? "ReadCapacityUnits" :
	    "WriteCapacityUnits");
	return false;
}

static index_projection
projection_of(const char *s)
{
	if (s == NULL)
		return 0;
	if (strcmp(s, "ALL") == 0)
		return PROJECT_ALL;
	if (strcmp(s, "KEYS_ONLY") == 0)
		return PROJECT_KEYS_ONLY;
	if (strcmp(s, "INCLUDE") == 0)
		return PROJECT_INCLUDE;
	return 0;
}

static const char *
projection_name(index_projection p)
{
	switch (p) {
	case PROJECT_ALL: return "ALL";
	case PROJECT_KEYS_ONLY: return "KEYS_ONLY";
	case PROJECT_INCLUDE: return "INCLUDE";
	}
	return "ALL";
}

/*
 * names[0..n) as Java prints a list ("[a, b]", which is how DynamoDB's
 * messages show lists), in a; NULL without memory.
 */
static char *
java_list(arena *a, const char *const *names, size_t n)
{
	size_t len = 3;
	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + 2;
	char *s = arena_alloc_raw(a, len), *p = s;
	if (s == NULL)
		return NULL;
	*p++ = '[';
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		if (i > 0) {
			memcpy(p, ", ", 2);
			p += 2;
		}
		memcpy(p, names[i], l);
		p += l;
	}
	*p++ = ']';
	*p = '\0';
	return s;
}

/*
 * Java's String.hashCode, over s's UTF-16 code units. DynamoDB gathers
 * the key attributes in use in a java.util.HashSet and its "keys used"
 * message lists them in that set's iteration order, which follows these
 * hashes rather than the request.
 */
static uint32_t
java_hash(const char *s)
{
	const unsigned char *p = (const unsigned char *) s;
	uint32_t h = 0;
	while (*p != '\0') {
		uint32_t cp;
		int more = *p < 0x80 ? 0 : *p < 0xE0 ? 1 : *p < 0xF0 ? 2 : 3;
		cp = more == 0 ? *p : *p & (0x3F >> more);
		p++;
		for (; more > 0 && (*p & 0xC0) == 0x80; more--, p++)
			cp = cp << 6 | (*p & 0x3F);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			h = 31 * h + (0xD800 + (cp >> 10));
			h = 31 * h + (0xDC00 + (cp & 0x3FF));
		} else {
			h = 31 * h + cp;
		}
	}
	return h;
}

/* The bucket of s in a java.util.HashMap of cap buckets. */
static size_t
java_bucket(const char *s, size_t cap)
{
	uint32_t h = java_hash(s);
	return (h ^ h >> 16) & (cap - 1);
}

/*
 * Puts names[0..n), added to a HashSet in this order, in the order the
 * set iterates: by bucket, and in a bucket by insertion (a HashMap
 * doubles from 16 buckets whenever it is more than 3/4 full, and its
 * resizing keeps each bucket's order). A stable insertion sort: n is at
 * most the 64 definitions.
 */
static void
java_set_order(const char **names, size_t n)
{
	size_t cap = 16;
	while (n > cap / 4 * 3)
		cap *= 2;
	for (size_t i = 1; i < n; i++) {
		const char *x = names[i];
		size_t b = java_bucket(x, cap), k = i;
		for (; k > 0 && java_bucket(names[k - 1], cap) > b; k--)
			names[k] = names[k - 1];
		names[k] = x;
	}
}

/* Reads the KeySchema of index r, at member r->at.keySchema. */
static bool
read_key_schema(json_t *ks, index_req *r, req_errors *e, reply *out)
{
	if (ks == NULL) {
		req_errors_add(e, "Value null at '%s.keySchema' failed to "
		    "satisfy constraint: Member must not be null", r->at);
		return true;
	}
	size_t max = r->local ? 2 : MAX_KEY_ELEMS;
	r->nk = json_array_size(ks);
	if (r->nk < 1 || r->nk > max)
		req_errors_add(e, "Value '%s' at '%s.keySchema' failed to "
		    "satisfy constraint: Member must have length %s%s",
		    r->nk < 1 ? "[]" : "[...]", r->at, r->nk < 1 ?
		    "greater than or equal to 1" : "less than or equal to ",
		    r->nk < 1 ? "" : r->local ? "2" : "8");
	for (size_t i = 0; i < r->nk && i < max; i++) {
		json_t *k = json_array_get(ks, i);
		if (!json_is_object(k)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload for member KeySchema");
			return false;
		}
		if (!req_string(k, "AttributeName", &r->kn[i], out) ||
		    !req_string(k, "KeyType", &r->kt[i], out))
			return false;
		if (r->kn[i] == NULL)
			req_errors_add(e, "Value null at '%s.keySchema.%zu."
			    "member.attributeName' failed to satisfy "
			    "constraint: Member must not be null", r->at, i + 1);
		if (r->kt[i] == NULL)
			req_errors_add(e, "Value null at '%s.keySchema.%zu."
			    "member.keyType' failed to satisfy constraint: "
			    "Member must not be null", r->at, i + 1);
		else if (strcmp(r->kt[i], "HASH") != 0 &&
		    strcmp(r->kt[i], "RANGE") != 0)
			req_errors_add(e, "Value '%s' at '%s.keySchema.%zu."
			    "member.keyType' failed to satisfy constraint: "
			    "Member must satisfy enum value set: [HASH, RANGE]",
			    r->kt[i], r->at, i + 1);
	}
	return true;
}

/* Reads the Projection of index r, at member r->at.projection. */
static bool
read_projection(arena *a, json_t *proj, index_req *r, req_errors *e,
    reply *out)
{
	if (proj == NULL) {
		req_errors_add(e, "Value null at '%s.projection' failed to "
		    "satisfy constraint: Member must not be null", r->at);
		return true;
	}
	if (!req_string(proj, "ProjectionType", &r->ptype, out) ||
	    !req_array(proj, "NonKeyAttributes", &r->nonkey, out))
		return false;
	if (r->ptype != NULL && projection_of(r->ptype) == 0)
		req_errors_add(e, "Value '%s' at '%s.projection."
		    "projectionType' failed to satisfy constraint: Member must "
		    "satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]",
		    r->ptype, r->at);
	if (r->nonkey == NULL)
		return true;
	size_t n = json_array_size(r->nonkey);
	const char **names = arena_alloc(a, (n + 1) * sizeof(*names));
	if (names == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(r->nonkey, i);
		if (!json_is_string(s)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload for member NonKeyAttributes");
			return false;
		}
		names[i] = json_string_value(s);
		if (strlen(names[i]) != json_string_length(s)) {
			/* As req_string: names never hold NUL. */
			errors_reply(out, ERR_VALIDATION, "1 validation error "
			    "detected: Value at 'NonKeyAttributes' failed to "
			    "satisfy constraint: Member must not contain the "
			    "NUL character");
			return false;
		}
	}
	if (n < 1) {
		req_errors_add(e, "Value '[]' at '%s.projection."
		    "nonKeyAttributes' failed to satisfy constraint: Member "
		    "must have length greater than or equal to 1", r->at);
	} else if (n > MAX_NONKEY) {
		char *l = java_list(a, names, n);
		if (l == NULL) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
		req_errors_add(e, "Value '%s' at '%s.projection."
		    "nonKeyAttributes' failed to satisfy constraint: Member "
		    "must have length less than or equal to %d", l, r->at,
		    MAX_NONKEY);
	}
	return true;
}

/*
 * Reads index r (r->local, r->pos and r->at set) from ix. DynamoDB lists
 * the violations of a CreateTable index as name, throughput, key schema,
 * projection, and those of an UpdateTable Create action projection first
 * (the order of dynalite's validations/updateTable.js, which follows
 * DynamoDB's answers).
 */
static bool
read_index(arena *a, json_t *ix, index_req *r, bool create_action,
    req_errors *e, reply *out)
{
	json_t *ks, *proj, *pt = NULL;
	char m[160];

	/* OnDemandThroughput and WarmThroughput are accepted and unused. */
	if (!req_string(ix, "IndexName", &r->name, out) ||
	    !req_array(ix, "KeySchema", &ks, out) ||
	    !req_object(ix, "Projection", &proj, out) ||
	    (!r->local && !req_object(ix, "ProvisionedThroughput", &pt, out)))
		return false;
	if (create_action && !read_projection(a, proj, r, e, out))
		return false;
	/* Index names follow the rules (and messages) of table names. */
	snprintf(m, sizeof(m), "%s.indexName", r->at);
	req_check_table_name(e, r->name, m);
	if (pt != NULL) {
		r->has_pt = true;
		snprintf(m, sizeof(m), "%s.provisionedThroughput", r->at);
		if (!index_spec_read_throughput(pt, m, e, &r->rcu, &r->wcu,
		    out))
			return false;
	}
	if (!read_key_schema(ks, r, e, out))
		return false;
	return create_action || read_projection(a, proj, r, e, out);
}

/* A member path printed into a (at most 255 bytes), or NULL. */
static char *
member_path(arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static char *
member_path(arena *a, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	return arena_dup(a, buf, (size_t) n < sizeof(buf) ? (size_t) n :
	    sizeof(buf) - 1);
}

bool
index_spec_read(api_ctx *c, json_t *body, index_spec *s, req_errors *e,
    reply *out)
{
	memset(s, 0, sizeof(*s));
	if (!req_array(body, "LocalSecondaryIndexes", &s->local, out) ||
	    !req_array(body, "GlobalSecondaryIndexes", &s->global, out))
		return false;
	s->n_local = s->local != NULL ? json_array_size(s->local) : 0;
	s->n_global = s->global != NULL ? json_array_size(s->global) : 0;
	size_t n = s->n_local + s->n_global;
	s->reqs = arena_alloc(c->a, (n + 1) * sizeof(*s->reqs));
	if (s->reqs == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		index_req *r = &s->reqs[i];
		r->local = i < s->n_local;
		r->pos = r->local ? i + 1 : i - s->n_local + 1;
		r->at = member_path(c->a, "%s.%zu.member", r->local ?
		    "localSecondaryIndexes" : "globalSecondaryIndexes", r->pos);
		if (r->at == NULL) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
		json_t *ix = json_array_get(r->local ? s->local : s->global,
		    r->pos - 1);
		if (!json_is_object(ix)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload for member %s", r->local ?
			    "LocalSecondaryIndexes" : "GlobalSecondaryIndexes");
			return false;
		}
		if (!read_index(c->a, ix, r, false, e, out))
			return false;
	}
	return true;
}

bool
index_spec_given(const index_spec *s)
{
	return s->local != NULL || s->global != NULL;
}

static const key_def *
find_def(const index_spec_table *t, const char *name)
{
	for (size_t i = 0; i < t->n_defs; i++)
		if (strcmp(t->defs[i].name, name) == 0)
			return &t->defs[i];
	return NULL;
}

/* The definitions' names in their order, as DynamoDB's messages list them. */
static char *
def_list(arena *a, const index_spec_table *t)
{
	const char *names[64];
	size_t n = t->n_defs < 64 ? t->n_defs : 64;
	for (size_t i = 0; i < n; i++)
		names[i] = t->defs[i].name;
	return java_list(a, names, n);
}

/*
 * Every key attribute of index r must be defined in t's definitions;
 * DynamoDB's refusal names the index's keys and all the definitions.
 */
static bool
check_keys_defined(arena *a, const index_req *r, const index_spec_table *t,
    reply *out)
{
	size_t nk = r->nk < MAX_KEY_ELEMS ? r->nk : MAX_KEY_ELEMS;
	bool defined = true;
	for (size_t k = 0; k < nk; k++)
		defined &= find_def(t, r->kn[k]) != NULL;
	if (defined)
		return true;
	char *keys = java_list(a, r->kn, nk), *defs = def_list(a, t);
	if (keys == NULL || defs == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	errors_reply(out, ERR_VALIDATION, INVALID "Some index key attributes "
	    "are not defined in AttributeDefinitions. Keys: %s, "
	    "AttributeDefinitions: %s", keys, defs);
	return false;
}

/*
 * Every index key attribute must be defined (DynamoDB names the first
 * index that has one that is not), and every definition used by some key
 * schema.
 */
static bool
check_definitions(arena *a, const index_spec *s, const index_spec_table *t,
    reply *out)
{
	size_t total = s->n_local + s->n_global;
	for (size_t i = 0; i < total; i++)
		if (!check_keys_defined(a, &s->reqs[i], t, out))
			return false;

	/* All keys are defined, so at most n_defs distinct ones are used. */
	const char *used[64];
	size_t nu = 0;
	const char *table_keys[2] = { t->hash, t->range };
	for (size_t i = 0; i <= total; i++) {
		const char *const *kn = i == 0 ? table_keys : s->reqs[i - 1].kn;
		size_t nk = i == 0 ? (t->range != NULL ? 2 : 1) :
		    s->reqs[i - 1].nk < MAX_KEY_ELEMS ? s->reqs[i - 1].nk :
		    MAX_KEY_ELEMS;
		for (size_t k = 0; k < nk; k++) {
			size_t u = 0;
			while (u < nu && strcmp(used[u], kn[k]) != 0)
				u++;
			if (u == nu && nu < 64)
				used[nu++] = kn[k];
		}
	}
	for (size_t d = 0; d < t->n_defs; d++) {
		size_t u = 0;
		while (u < nu && strcmp(used[u], t->defs[d].name) != 0)
			u++;
		if (u < nu)
			continue;
		java_set_order(used, nu);
		char *defs = def_list(a, t), *keys = java_list(a, used, nu);
		if (keys == NULL || defs == NULL) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
		errors_reply(out, ERR_VALIDATION, INVALID "Some "
		    "AttributeDefinitions are not used. AttributeDefinitions: "
		    "%s, keys used: %s", defs, keys);
		return false;
	}
	return true;
}

/*
 * A GSI's multi-attribute key schema: its HASH elements, then its RANGE
 * elements, at most INDEX_KEY_PARTS of each, no attribute twice. These
 * refusals' words are ours: DynamoDB's own were not found.
 */
static bool
check_multi_keys(const index_req *r, reply *out)
{
	size_t nh = 0;
	while (nh < r->nk && strcmp(r->kt[nh], "HASH") == 0)
		nh++;
	for (size_t k = nh; k < r->nk; k++)
		if (strcmp(r->kt[k], "HASH") == 0) {
			errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: "
			    "A HASH KeySchemaElement cannot follow a RANGE "
			    "KeySchemaElement");
			return false;
		}
	if (nh > INDEX_KEY_PARTS || r->nk - nh > INDEX_KEY_PARTS) {
		errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: A key "
		    "schema can have at most %d HASH and %d RANGE "
		    "KeySchemaElements", INDEX_KEY_PARTS, INDEX_KEY_PARTS);
		return false;
	}
	for (size_t k = 1; k < r->nk; k++)
		for (size_t j = 0; j < k; j++)
			if (strcmp(r->kn[j], r->kn[k]) == 0) {
				errors_reply(out, ERR_VALIDATION, "Invalid "
				    "KeySchema: Some KeySchemaElements have the "
				    "same name: %s", r->kn[k]);
				return false;
			}
	return true;
}

/* The key schema of one index, past its shape. */
static bool
check_keys(const index_req *r, const index_spec_table *t, reply *out)
{
	if (r->nk == 2 && strcmp(r->kn[0], r->kn[1]) == 0) {
		errors_reply(out, ERR_VALIDATION, "Both the Hash Key and the "
		    "Range Key element in the KeySchema have the same name");
		return false;
	}
	if (strcmp(r->kt[0], "HASH") != 0) {
		errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: The first "
		    "KeySchemaElement is not a HASH key type");
		return false;
	}
	if (!r->local)
		return check_multi_keys(r, out);
	if (r->nk == 2 && strcmp(r->kt[1], "RANGE") != 0) {
		errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: The "
		    "second KeySchemaElement is not a RANGE key type");
		return false;
	}
	if (r->nk != 2) {
		errors_reply(out, ERR_VALIDATION, INVALID "Index KeySchema does "
		    "not have a range key for index: %s", r->name);
		return false;
	}
	if (strcmp(r->kn[0], t->hash) != 0) {
		errors_reply(out, ERR_VALIDATION, INVALID "Index KeySchema does "
		    "not have the same leading hash key as table KeySchema for "
		    "index: %s. index hash key: %s, table hash key: %s",
		    r->name, r->kn[0], t->hash);
		return false;
	}
	return true;
}

/* The projection of one index, past its shape; fills d's. */
static bool
check_projection(arena *a, const index_req *r, index_def *d, reply *out)
{
	if (r->ptype == NULL) {
		errors_reply(out, ERR_VALIDATION, INVALID "Unknown "
		    "ProjectionType: null");
		return false;
	}
	d->projection = projection_of(r->ptype);
	if (d->projection != PROJECT_INCLUDE && r->nonkey != NULL) {
		errors_reply(out, ERR_VALIDATION, INVALID "ProjectionType is "
		    "%s, but NonKeyAttributes is specified", r->ptype);
		return false;
	}
	if (d->projection != PROJECT_INCLUDE)
		return true;
	if (r->nonkey == NULL) {
		errors_reply(out, ERR_VALIDATION, INVALID "ProjectionType is "
		    "INCLUDE, but NonKeyAttributes is not specified");
		return false;
	}
	size_t n = json_array_size(r->nonkey);
	d->include = arena_alloc(a, (n + 1) * sizeof(*d->include));
	if (d->include == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	/* At most MAX_NONKEY names (a shape check passed): pairwise. */
	for (size_t i = 0; i < n; i++) {
		const char *x = json_string_value(json_array_get(r->nonkey, i));
		for (size_t k = 0; k < i; k++)
			if (strcmp(d->include[k], x) == 0) {
				errors_reply(out, ERR_VALIDATION, INVALID
				    "Duplicate element in NonKeyAttributes: %s",
				    x);
				return false;
			}
		d->include[i] = (char *) x;
	}
	d->n_include = n;
	return true;
}

/*
 * A GSI's throughput goes with the billing mode the table has (or, for
 * UpdateTable, will have). CreateTable and UpdateTable word it apart.
 */
static bool
check_throughput(const index_req *r, const index_spec_table *t, bool update,
    index_def *d, reply *out)
{
	if (t->on_demand && r->has_pt) {
		if (update)
			errors_reply(out, ERR_VALIDATION, INVALID "Neither "
			    "ReadCapacityUnits nor WriteCapacityUnits can be "
			    "specified for index: %s when BillingMode is "
			    "PAY_PER_REQUEST", r->name);
		else
			errors_reply(out, ERR_VALIDATION, INVALID
			    "ProvisionedThroughput should not be specified for "
			    "index: %s when BillingMode is PAY_PER_REQUEST",
			    r->name);
		return false;
	}
	if (!t->on_demand && !r->has_pt) {
		if (update)
			errors_reply(out, ERR_VALIDATION, INVALID "Both "
			    "ReadCapacityUnits and WriteCapacityUnits must be "
			    "specified for index: %s", r->name);
		else
			errors_reply(out, ERR_VALIDATION, INVALID
			    "ProvisionedThroughput is not specified for index: "
			    "%s", r->name);
		return false;
	}
	if (!index_spec_throughput_in_bounds(r->rcu, r->wcu, out))
		return false;
	d->rcu = (uint64_t) r->rcu;
	d->wcu = (uint64_t) r->wcu;
	return true;
}

/*
 * check_index checks one index definition, of CreateTable (update false)
 * or of an UpdateTable Create action (update true), past its shape and
 * with its key attributes defined in t: key schema, projection, and a
 * GSI's throughput. Fills *d (strings borrowed from the request).
 */
static bool
check_index(arena *a, const index_req *r, const index_spec_table *t,
    bool update, index_def *d, reply *out)
{
	if (!check_keys(r, t, out) || !check_projection(a, r, d, out) ||
	    (!r->local && !check_throughput(r, t, update, d, out)))
		return false;
	d->name = (char *) r->name;
	d->local = r->local;
	/* KeySchema: the HASH elements, then the RANGE ones (checked). */
	for (size_t k = 0; k < r->nk; k++) {
		const key_def *def = find_def(t, r->kn[k]);
		if (strcmp(r->kt[k], "HASH") == 0) {
			if (k == 0)
				d->hash = *def;
			else
				d->hmore[d->n_hmore++] = *def;
		} else if (d->range.name == NULL) {
			d->range = *def;
		} else {
			d->rmore[d->n_rmore++] = *def;
		}
	}
	return true;
}

/*
 * Checks the indexes reqs[from..to) of s (all LSIs or all GSIs) and fills
 * defs[from..to); names holds the index names seen so far (a JSON object
 * used as a set, so that a long list costs no more than linear time).
 */
static bool
check_list(arena *a, const index_spec *s, const index_spec_table *t,
    size_t from, size_t to, json_t *names, index_def *defs, reply *out)
{
	for (size_t i = from; i < to; i++) {
		const index_req *r = &s->reqs[i];
		if (!check_index(a, r, t, false, &defs[i], out))
			return false;
		if (json_object_get(names, r->name) != NULL) {
			errors_reply(out, ERR_VALIDATION, INVALID "Duplicate "
			    "index name: %s", r->name);
			return false;
		}
		if (json_object_set_new(names, r->name, json_true()) != 0) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
	}
	return true;
}

bool
index_spec_check(api_ctx *c, const index_spec *s, const index_spec_table *t,
    index_def **defs, size_t *n, reply *out)
{
	size_t total = s->n_local + s->n_global, projected = 0;

	*defs = NULL;
	*n = 0;
	if (!index_spec_given(s))
		return true;
	if (s->local != NULL && s->n_local == 0) {
		errors_reply(out, ERR_VALIDATION, INVALID "List of "
		    "LocalSecondaryIndexes is empty");
		return false;
	}
	if (s->n_local > 0 && t->range == NULL) {
		errors_reply(out, ERR_VALIDATION, INVALID "Table KeySchema does "
		    "not have a range key, which is required when specifying a "
		    "LocalSecondaryIndex");
		return false;
	}
	if (s->global != NULL && s->n_global == 0) {
		errors_reply(out, ERR_VALIDATION, INVALID "List of "
		    "GlobalSecondaryIndexes is empty");
		return false;
	}
	if (!check_definitions(c->a, s, t, out))
		return false;

	index_def *d = arena_alloc(c->a, (total + 1) * sizeof(*d));
	json_t *names = json_object();
	bool ok = d != NULL && names != NULL;
	if (!ok)
		errors_from_kv(out, KV_ENOMEM);
	ok = ok && check_list(c->a, s, t, 0, s->n_local, names, d, out);
	if (ok && s->n_local > INDEX_SPEC_MAX_LSI) {
		errors_reply(out, ERR_VALIDATION, INVALID "Number of "
		    "LocalSecondaryIndexes exceeds per-table limit of %d",
		    INDEX_SPEC_MAX_LSI);
		ok = false;
	}
	ok = ok && check_list(c->a, s, t, s->n_local, total, names, d, out);
	json_decref(names);
	if (!ok)
		return false;
	if (s->n_global > INDEX_SPEC_MAX_GSI) {
		errors_reply(out, ERR_VALIDATION, INVALID "GlobalSecondaryIndex "
		    "count exceeds the per-table limit of %d",
		    INDEX_SPEC_MAX_GSI);
		return false;
	}
	/*
	 * The documented limit on NonKeyAttributes summed over all indexes
	 * (a name projected into two indexes counts twice). DynamoDB's
	 * wording of this refusal was not found; this one is ours.
	 */
	for (size_t i = 0; i < total; i++)
		projected += d[i].n_include;
	if (projected > INDEX_SPEC_MAX_PROJECTED) {
		errors_reply(out, ERR_VALIDATION, INVALID "Number of "
		    "NonKeyAttributes summed across all secondary indexes "
		    "exceeds the per-table limit of %d",
		    INDEX_SPEC_MAX_PROJECTED);
		return false;
	}
	*defs = d;
	*n = total;
	return true;
}

/* ---- UpdateTable: GlobalSecondaryIndexUpdates ---- */

/* Reads the Update action u of element pos: IndexName and throughput. */
static bool
read_update_action(json_t *upd, size_t pos, index_update *u,
    req_errors *e, reply *out)
{
	const char *name;
	json_t *pt;
	char m[160];
	json_int_t rcu = 0, wcu = 0;

	/* OnDemandThroughput and WarmThroughput are not served. */
	if (!req_string(upd, "IndexName", &name, out) ||
	    !req_object(upd, "ProvisionedThroughput", &pt, out))
		return false;
	snprintf(m, sizeof(m), "globalSecondaryIndexUpdates.%zu.member.update."
	    "indexName", pos);
	req_check_table_name(e, name, m);
	snprintf(m, sizeof(m), "globalSecondaryIndexUpdates.%zu.member.update."
	    "provisionedThroughput", pos);
	if (pt == NULL)
		req_errors_add(e, "Value null at '%s' failed to satisfy "
		    "constraint: Member must not be null", m);
	else if (!index_spec_read_throughput(pt, m, e, &rcu, &wcu, out))
		return false;
	u->kind = INDEX_CHANGE_THROUGHPUT;
	u->name = name;
	u->rcu = rcu;
	u->wcu = wcu;
	return true;
}

/*
 * Reads element pos (1-based) of GlobalSecondaryIndexUpdates. Its
 * actions' violations come in the order Update, Create, Delete (that of
 * dynalite's validations/updateTable.js).
 */
static bool
read_update(arena *a, json_t *el, size_t pos, index_update *u,
    req_errors *e, reply *out)
{
	json_t *upd, *cre, *del;
	char m[160];

	if (!json_is_object(el)) {
		errors_reply(out, ERR_SERIALIZATION, "Unexpected value type in "
		    "payload for member GlobalSecondaryIndexUpdates");
		return false;
	}
	if (!req_object(el, "Update", &upd, out) ||
	    !req_object(el, "Create", &cre, out) ||
	    !req_object(el, "Delete", &del, out))
		return false;
	u->n_actions = (upd != NULL) + (cre != NULL) + (del != NULL);
	index_update first = *u;
	if (upd != NULL) {
		if (!read_update_action(upd, pos, &first, e, out))
			return false;
	}
	if (cre != NULL) {
		index_req *r = arena_alloc(a, sizeof(*r));
		if (r == NULL || (r->at = member_path(a, "globalSecondaryIndex"
		    "Updates.%zu.member.create", pos)) == NULL) {
			errors_from_kv(out, KV_ENOMEM);
			return false;
		}
		r->pos = pos;
		if (!read_index(a, cre, r, true, e, out))
			return false;
		if (first.kind == 0) {
			first.kind = INDEX_CHANGE_CREATE;
			first.name = r->name;
			first.create = r;
		}
	}
	if (del != NULL) {
		const char *name;
		if (!req_string(del, "IndexName", &name, out))
			return false;
		snprintf(m, sizeof(m), "globalSecondaryIndexUpdates.%zu.member."
		    "delete.indexName", pos);
		req_check_table_name(e, name, m);
		if (first.kind == 0) {
			first.kind = INDEX_CHANGE_DELETE;
			first.name = name;
		}
	}
	*u = first;
	return true;
}

bool
index_spec_read_updates(api_ctx *c, json_t *body, index_updates *s,
    req_errors *e, reply *out)
{
	memset(s, 0, sizeof(*s));
	if (!req_array(body, "GlobalSecondaryIndexUpdates", &s->list, out))
		return false;
	s->n = s->list != NULL ? json_array_size(s->list) : 0;
	s->u = arena_alloc(c->a, (s->n + 1) * sizeof(*s->u));
	if (s->u == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	for (size_t i = 0; i < s->n; i++)
		if (!read_update(c->a, json_array_get(s->list, i), i + 1,
		    &s->u[i], e, out))
			return false;
	return true;
}

bool
index_spec_check_updates(const index_updates *s, reply *out)
{
	json_t *names = json_object();
	bool ok = names != NULL;

	if (!ok)
		errors_from_kv(out, KV_ENOMEM);
	for (size_t i = 0; ok && i < s->n; i++) {
		const index_update *u = &s->u[i];
		if (u->n_actions == 0) {
			errors_reply(out, ERR_VALIDATION, INVALID "One of "
			    "GlobalSecondaryIndexUpdate.Update, "
			    "GlobalSecondaryIndexUpdate.Create, "
			    "GlobalSecondaryIndexUpdate.Delete must not be null");
			ok = false;
		} else if (u->n_actions > 1) {
			errors_reply(out, ERR_VALIDATION, INVALID "Only one "
			    "global secondary index action is allowed per "
			    "GlobalSecondaryIndexUpdate object");
			ok = false;
		} else if (json_object_get(names, u->name) != NULL) {
			errors_reply(out, ERR_VALIDATION, INVALID "Only one "
			    "global secondary index update per index is allowed "
			    "simultaneously. Index: %s", u->name);
			ok = false;
		} else if (json_object_set_new(names, u->name,
		    json_true()) != 0) {
			errors_from_kv(out, KV_ENOMEM);
			ok = false;
		}
	}
	json_decref(names);
	return ok;
}

void
index_spec_not_found(reply *out, const char *table, const char *index)
{
	errors_reply(out, ERR_RESOURCE_NOT_FOUND, "Requested resource not "
	    "found: Index %s for table %s", index, table);
}

static const index_def *
index_named(const table *t, const char *name)
{
	for (size_t i = 0; i < t->n_indexes; i++)
		if (strcmp(t->indexes[i].name, name) == 0)
			return &t->indexes[i];
	return NULL;
}

/*
 * The existing key schema element of attribute `name` in t (its own key
 * first, then its indexes', in order), with its role; NULL when no key
 * of t uses it.
 */
static const key_def *
existing_key(const table *t, const char *name, const char **role)
{
	const key_def *k[2 * INDEX_KEY_PARTS] = { &t->hash, &t->range };
	size_t nh = 1, nr = 1;
	for (size_t i = 0; i <= t->n_indexes; i++) {
		if (i > 0) {
			const index_def *d = &t->indexes[i - 1];
			nr = index_key_all(d, k, &nh) - nh;
		}
		for (size_t r = 0; r < nh + nr; r++) {
			if (k[r]->name != NULL && strcmp(k[r]->name, name) == 0) {
				*role = r < nh ? "HASH" : "RANGE";
				return k[r];
			}
		}
	}
	return NULL;
}

/*
 * A new index's key attribute must keep the type the table's key schemas
 * already give it. The message is DynamoDB's as Alternator's
 * test_gsi_updatetable.py quotes it, its schema elements laid out as in
 * the variants Dynoxide captured (one element, the attribute's).
 * Definitions that no key uses are not compared: DynamoDB drops them.
 */
static bool
check_redefinition(const index_req *r, const index_spec_table *t,
    const table *cur, reply *out)
{
	for (size_t k = 0; k < r->nk && k < MAX_KEY_ELEMS; k++) {
		const char *role;
		const key_def *old = existing_key(cur, r->kn[k], &role);
		const key_def *now = find_def(t, r->kn[k]);
		if (old == NULL || old->type == now->type)
			continue;
		errors_reply(out, ERR_VALIDATION, INVALID "Attributes cannot be "
		    "redefined. Please check that your attribute has the same "
		    "type as previously defined. Existing schema: "
		    "Schema:[SchemaElement: key{%s:%s:%s}] New schema: "
		    "Schema:[SchemaElement: key{%s:%s:%s}]", old->name,
		    value_type_name(old->type), role, r->kn[k],
		    value_type_name(now->type), r->kt[k]);
		return false;
	}
	return true;
}

/* The checks of a Create action, against the table; fills *d. */
static bool
plan_create(arena *a, const index_update *u, const index_spec_base *b,
    index_def *d, reply *out)
{
	const index_req *r = u->create;
	const table *cur = b->cur;
	/*
	 * The name check comes before the new index's own schema ("existing
	 * index check beats schema validation", as measured by an emulator's
	 * authors against DynamoDB). An LSI's name is taken too.
	 */
	if (index_named(cur, r->name) != NULL) {
		errors_reply(out, ERR_VALIDATION, "Attempting to create an "
		    "index which already exists");
		return false;
	}
	if (!b->defs_given) {
		errors_reply(out, ERR_VALIDATION, INVALID "AttributeDefinitions "
		    "is not specified for index: %s", r->name);
		return false;
	}
	index_spec_table t = { .hash = cur->hash.name, .range =
	    cur->range.name, .defs = b->defs, .n_defs = b->n_defs,
	    .on_demand = b->want == BILLING_PAY_PER_REQUEST };
	/*
	 * DynamoDB's wording for a key attribute that a given
	 * AttributeDefinitions leaves out was not found; CreateTable's is
	 * used. Definitions no key uses are ignored, as DynamoDB does here.
	 */
	if (!check_keys_defined(a, r, &t, out) ||
	    !check_redefinition(r, &t, cur, out) ||
	    !check_index(a, r, &t, true, d, out))
		return false;
	size_t gsis = 0, projected = d->n_include;
	for (size_t i = 0; i < cur->n_indexes; i++) {
		gsis += !cur->indexes[i].local;
		projected += cur->indexes[i].n_include;
	}
	if (gsis + 1 > INDEX_SPEC_MAX_GSI) {
		errors_reply(out, ERR_LIMIT_EXCEEDED, "Subscriber limit "
		    "exceeded: Number of global secondary indexes exceeds "
		    "per-table limit of %d", INDEX_SPEC_MAX_GSI);
		return false;
	}
	if (projected > INDEX_SPEC_MAX_PROJECTED) {
		/* Our wording, as in CreateTable (index_spec_check). */
		errors_reply(out, ERR_VALIDATION, INVALID "Number of "
		    "NonKeyAttributes summed across all secondary indexes "
		    "exceeds the per-table limit of %d",
		    INDEX_SPEC_MAX_PROJECTED);
		return false;
	}
	return true;
}

/* The checks of an Update action, against the table; fills *d. */
static bool
plan_throughput(const index_update *u, const index_spec_base *b,
    index_def *d, reply *out)
{
	const table *cur = b->cur;
	const index_def *have = index_named(cur, u->name);
	if (have == NULL) {
		index_spec_not_found(out, cur->name, u->name);
		return false;
	}
	if (have->local) {
		errors_reply(out, ERR_VALIDATION, "Cannot update an index that "
		    "is not a GlobalSecondaryIndex: %s", u->name);
		return false;
	}
	if (b->want == BILLING_PAY_PER_REQUEST) {
		errors_reply(out, ERR_VALIDATION, INVALID "The only Updates for "
		    "index: %s when TableThroughputMode is PAY_PER_REQUEST can "
		    "be to OnDemandThroughput, WarmThroughput", u->name);
		return false;
	}
	if (cur->billing == BILLING_PROVISIONED &&
	    have->rcu == (uint64_t) u->rcu && have->wcu == (uint64_t) u->wcu) {
		/*
		 * The source quotes this message up to "Current
		 * WriteCapacityUnits ..."; the rest follows the table's own
		 * (node/catalog/catalog_node.c).
		 */
		errors_reply(out, ERR_VALIDATION, "The provisioned throughput "
		    "for the index %s will not change. The requested value "
		    "equals the current value. Current ReadCapacityUnits "
		    "provisioned for index %s: %llu. Requested "
		    "ReadCapacityUnits: %lld. Current WriteCapacityUnits "
		    "provisioned for index %s: %llu. Requested "
		    "WriteCapacityUnits: %lld. Refer to the Amazon DynamoDB "
		    "Developer Guide for current limits and how to request "
		    "higher limits.", u->name, u->name,
		    (unsigned long long) have->rcu, (long long) u->rcu, u->name,
		    (unsigned long long) have->wcu, (long long) u->wcu);
		return false;
	}
	*d = *have;
	d->rcu = (uint64_t) u->rcu;
	d->wcu = (uint64_t) u->wcu;
	return true;
}

/* The checks of a Delete action, against the table; fills *d. */
static bool
plan_delete(const index_update *u, const index_spec_base *b, index_def *d,
    reply *out)
{
	const index_def *have = index_named(b->cur, u->name);
	if (have == NULL) {
		index_spec_not_found(out, b->cur->name, u->name);
		return false;
	}
	if (have->local) {
		errors_reply(out, ERR_VALIDATION, "Cannot delete an index that "
		    "is not a GlobalSecondaryIndex: %s", u->name);
		return false;
	}
	*d = *have;
	return true;
}

/*
 * The order of these checks is DynamoDB's where a source shows it: one
 * create or delete per request before any index is looked up (Alternator's
 * test_gsi_updatetable.py deletes two missing indexes and gets the
 * limit), an Update's out-of-bounds throughput before its index is looked
 * up (dynalite's test/updateTable.js), then each action in the request's
 * order; a switch to PROVISIONED that leaves a GSI without throughput is
 * refused last (our placement).
 */
bool
index_spec_plan(api_ctx *c, const index_updates *s, const index_spec_base *b,
    index_change **changes, size_t *n, reply *out)
{
	const table *cur = b->cur;
	size_t online = 0, nc = 0;

	*changes = NULL;
	*n = 0;
	for (size_t i = 0; i < s->n; i++)
		online += s->u[i].kind != INDEX_CHANGE_THROUGHPUT;
	if (online > 1) {
		errors_reply(out, ERR_LIMIT_EXCEEDED, "Subscriber limit "
		    "exceeded: Only 1 online index can be created or deleted "
		    "simultaneously per table");
		return false;
	}
	if (online > 0 && b->table_pt) {
		errors_reply(out, ERR_VALIDATION, INVALID "You cannot create or "
		    "delete index while updating table IOPS");
		return false;
	}
	for (size_t i = 0; i < s->n; i++) {
		const index_update *u = &s->u[i];
		if (u->kind == INDEX_CHANGE_THROUGHPUT &&
		    (u->rcu > MAX_PROVISIONED || u->wcu > MAX_PROVISIONED)) {
			errors_reply(out, ERR_VALIDATION, "This operation cannot "
			    "be performed with given input values. Please "
			    "contact DynamoDB service team for more info: Action "
			    "Blocked: IndexUpdate");
			return false;
		}
	}

	index_change *ch = arena_alloc(c->a, (s->n + 1) * sizeof(*ch));
	if (ch == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	index_change online_ch = { 0 };
	nc = 1; /* ch[0]: the create or delete, if any */
	for (size_t i = 0; i < s->n; i++) {
		const index_update *u = &s->u[i];
		index_change x = { .kind = u->kind };
		bool ok = u->kind == INDEX_CHANGE_CREATE ?
		    plan_create(c->a, u, b, &x.def, out) :
		    u->kind == INDEX_CHANGE_DELETE ?
		    plan_delete(u, b, &x.def, out) :
		    plan_throughput(u, b, &x.def, out);
		if (!ok)
			return false;
		if (u->kind == INDEX_CHANGE_THROUGHPUT)
			ch[nc++] = x;
		else
			online_ch = x;
	}
	if (cur->billing == BILLING_PAY_PER_REQUEST &&
	    b->want == BILLING_PROVISIONED) {
		/* Every GSI kept needs throughput of its own (DynamoDB
		 * assigns none). */
		for (size_t i = 0; i < cur->n_indexes; i++) {
			const index_def *d = &cur->indexes[i];
			bool given = d->local ||
			    (online_ch.kind == INDEX_CHANGE_DELETE &&
			    strcmp(online_ch.def.name, d->name) == 0);
			for (size_t k = 1; !given && k < nc; k++)
				given = strcmp(ch[k].def.name, d->name) == 0;
			if (given)
				continue;
			errors_reply(out, ERR_VALIDATION, INVALID
			    "ProvisionedThroughput must be specified for index: "
			    "%s", d->name);
			return false;
		}
	}
	if (online_ch.kind != 0)
		ch[0] = online_ch;
	*changes = online_ch.kind != 0 ? ch : ch + 1;
	*n = online_ch.kind != 0 ? nc : nc - 1;
	return true;
}

json_t *
index_spec_key_schema(const index_def *d)
{
	const key_def *k[2 * INDEX_KEY_PARTS];
	json_t *ks = json_array();
	size_t nh, n = index_key_all(d, k, &nh);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ks, json_pack("{s:s,s:s}",
		    "AttributeName", k[i]->name, "KeyType", i < nh ? "HASH" :
		    "RANGE"));
	return ks;
}

json_t *
index_spec_describe(const index_def *d, const char *table_arn,
    const table *it, const char *status, int backfilling, uint64_t items,
    uint64_t bytes)
{
	char arn[1024];

	snprintf(arn, sizeof(arn), "%s/index/%s", table_arn, d->name);
	json_t *proj = json_pack("{s:s}", "ProjectionType",
	    projection_name(d->projection));
	if (proj != NULL && d->projection == PROJECT_INCLUDE) {
		json_t *na = json_array();
		for (size_t i = 0; i < d->n_include; i++)
			json_array_append_new(na, json_string(d->include[i]));
		json_object_set_new(proj, "NonKeyAttributes", na);
	}
	json_t *j = json_pack("{s:s,s:o,s:o}", "IndexName", d->name,
	    "KeySchema", index_spec_key_schema(d), "Projection", proj);
	if (j == NULL)
		return NULL;
	if (!d->local) {
		/*
		 * The GSI's table carries its status and throughput; until
		 * the catalog lists it, the index is still being created
		 * with what the request asked for. On-demand shows 0 / 0.
		 */
		json_object_set_new(j, "IndexStatus", json_string(status));
		if (backfilling >= 0)
			json_object_set_new(j, "Backfilling",
			    json_boolean(backfilling > 0));
		json_object_set_new(j, "ProvisionedThroughput",
		    json_pack("{s:I,s:I,s:I}", "NumberOfDecreasesToday",
		    (json_int_t) 0, "ReadCapacityUnits",
		    (json_int_t) (it != NULL ? it->rcu : d->rcu),
		    "WriteCapacityUnits",
		    (json_int_t) (it != NULL ? it->wcu : d->wcu)));
	}
	json_object_set_new(j, "IndexSizeBytes", json_integer(
	    (json_int_t) bytes));
	json_object_set_new(j, "ItemCount", json_integer((json_int_t) items));
	json_object_set_new(j, "IndexArn", json_string(arn));
	return j;
}
