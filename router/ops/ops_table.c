/*
 * ops_table.c — CreateTable, DescribeTable, ListTables, DeleteTable and
 * UpdateTable (throughput, billing mode, global secondary indexes).
 *
 * The router checks a CreateTable request the way DynamoDB does (shape
 * first, then the key schema against the attribute definitions, then the
 * billing mode) and asks the catalog node to add the table; the catalog
 * node owns naming, ids and the CREATING -> ACTIVE transition. Describe
 * and List read a freshly fetched catalog, so a client polling for ACTIVE
 * sees it as soon as the catalog node does. ItemCount and TableSizeBytes
 * are summed from the owners' partition counters (DynamoDB refreshes these
 * about every six hours; ours are exact). Secondary indexes are read,
 * checked and described by index_spec.c; the catalog table that holds a
 * GSI's entries ("BASE/INDEX") is never listed, but its status shows in
 * its base table's description (describe_indexes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "conn.h"
#include "errors.h"
#include "index_key.h"
#include "index_spec.h"
#include "ops_table.h"
#include "request.h"
#include "route.h"

static const char *
status_name(table_status s)
{
	switch (s) {
	case TABLE_CREATING: return "CREATING";
	case TABLE_ACTIVE: return "ACTIVE";
	case TABLE_DELETING: return "DELETING";
	case TABLE_UPDATING: return "UPDATING";
	}
	return "ACTIVE";
}

/* What table_counts sums for each local index of a table, by number. */
typedef struct local_counts {
	uint64_t items[WIRE_LOCAL_MAX], bytes[WIRE_LOCAL_MAX];
} local_counts;

/*
 * Sums the partition counters of t over its owners (best effort); with
 * lc, also its local indexes' (counted by the nodes from time to time:
 * node/stats.c).
 */
static void
table_counts(api_ctx *c, const table *t, uint64_t *items, uint64_t *bytes,
    local_counts *lc)
{
	bool asked[CONFIG_MAX_NODES] = { false };
	*items = *bytes = 0;
	if (lc != NULL)
		memset(lc, 0, sizeof(*lc));
	for (size_t i = 0; i < t->n_parts; i++) {
		uint32_t node = t->parts[i].node;
		if (node >= CONFIG_MAX_NODES || asked[node])
			continue;
		asked[node] = true;
		rpc_request req = { .op = RPC_STATS, .table_id = t->id };
		rpc_response resp;
		if (conn_call(c->r, node, &req, c->a, &resp) != KV_OK)
			continue;
		for (size_t k = 0; k < resp.n_stats; k++) {
			const part_stats *s = &resp.stats[k];
			*items += s->items;
			*bytes += s->bytes;
			for (uint32_t x = 0; lc != NULL && x < s->n_local; x++) {
				lc->items[x] += s->local_items[x];
				lc->bytes[x] += s->local_bytes[x];
			}
		}
		wire_response_fini(&resp);
	}
}

static json_t *
key_schema_json(const table *t)
{
	json_t *ks = json_array();
	json_array_append_new(ks, json_pack("{s:s,s:s}", "AttributeName",
	    t->hash.name, "KeyType", "HASH"));
	if (t->range.name != NULL)
		json_array_append_new(ks, json_pack("{s:s,s:s}",
		    "AttributeName", t->range.name, "KeyType", "RANGE"));
	return ks;
}

/*
 * Whether a GSI of base table t is being deleted: its own table is
 * DELETING (the catalog node drops the index from t at once, and its
 * table after).
 */
static bool
index_deleting(api_ctx *c, const table *t)
{
	bool deleting = false;
	route_read_lock();
	const catalog *cat = route_current(c->r);
	for (size_t i = 0; i < cat->n_tables && !deleting; i++)
		deleting = cat->tables[i].base_id == t->id &&
		    cat->tables[i].status == TABLE_DELETING;
	route_read_unlock();
	return deleting;
}

/*
 * Adds t's GlobalSecondaryIndexes and LocalSecondaryIndexes to its
 * description j. A GSI's status, throughput and counts are those of the
 * catalog table that holds its entries. Returns whether DynamoDB would
 * show t UPDATING for its indexes.
 *
 * DynamoDB's life of a GSI added by UpdateTable (measured by the
 * ack-api-quirks lab, DDB-TABLE-148 and -138): first "resource
 * allocation", the table UPDATING and the index CREATING with Backfilling
 * false; then the table ACTIVE again while the index, CREATING with
 * Backfilling true, is filled; then ACTIVE, without Backfilling. Here the
 * first phase is the index table's CREATING (the catalog node places its
 * partitions), the second its backfilling while ACTIVE. An index being
 * deleted shows DELETING with the table UPDATING. GSIs created with
 * their table never show Backfilling.
 */
static bool
describe_indexes(api_ctx *c, const table *t, bool with_counts,
    const local_counts *lc, const char *arn, json_t *j)
{
	json_t *lists[2] = { NULL, NULL }; /* global, local */
	bool busy = false;

	for (size_t i = 0; i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		table copy;
		bool have = false;
		/* A copy: the counts below are network calls, made outside
		 * the route's read lock. */
		route_read_lock();
		const table *it = d->local || d->table_id == 0 ? NULL :
		    table_find_id(route_current(c->r), d->table_id);
		if (it != NULL)
			have = table_copy(it, &copy) == KV_OK;
		route_read_unlock();
		uint64_t items = 0, bytes = 0;
		if (with_counts && have && table_serving(&copy))
			table_counts(c, &copy, &items, &bytes, NULL);
		const char *status = "ACTIVE"; /* an LSI shows none */
		int backfilling = -1;
		if (d->local) {
			/* In its base table's partitions. */
			int k = index_local_no(t, d);
			if (lc != NULL && k >= 0 && k < WIRE_LOCAL_MAX) {
				items = lc->items[k];
				bytes = lc->bytes[k];
			}
		} else if (d->deleting) {
			status = "DELETING";
			busy = true;
		} else if (t->status == TABLE_CREATING ||
		    t->status == TABLE_DELETING) {
			/* Created or deleted with its table, which the
			 * answer shows as it was (the index's own table may
			 * already be ahead of it). */
			status = t->status == TABLE_DELETING ? "DELETING" :
			    "CREATING";
		} else if (!have) {
			/* Added to a live table; the router's catalog does not
			 * have its table yet. */
			status = "CREATING";
			backfilling = 0;
			busy = true;
		} else if (copy.status == TABLE_DELETING) {
			status = "DELETING";
			busy = true;
		} else if (copy.backfilling) {
			status = "CREATING";
			backfilling = copy.status != TABLE_CREATING;
			busy |= copy.status == TABLE_CREATING;
		} else {
			status = status_name(copy.status);
		}
		json_t **l = &lists[d->local ? 1 : 0];
		if (*l == NULL)
			*l = json_array();
		json_array_append_new(*l, index_spec_describe(d, arn,
		    have ? &copy : NULL, status, backfilling, items, bytes));
		if (have)
			table_fini(&copy);
	}
	if (lists[0] != NULL)
		json_object_set_new(j, "GlobalSecondaryIndexes", lists[0]);
	if (lists[1] != NULL)
		json_object_set_new(j, "LocalSecondaryIndexes", lists[1]);
	return busy;
}

json_t *
ops_table_json(api_ctx *c, const table *t, bool with_counts)
{
	char arn[512];
	json_t *defs = json_array();
	uint64_t items = 0, bytes = 0;

	errors_table_arn(arn, sizeof(arn), c->region, t->name);
	for (size_t i = 0; i < t->n_attr_defs; i++)
		json_array_append_new(defs, json_pack("{s:s,s:s}",
		    "AttributeName", t->attr_defs[i].name, "AttributeType",
		    value_type_name(t->attr_defs[i].type)));
	local_counts lc;
	bool counted = with_counts && table_serving(t);
	if (counted)
		table_counts(c, t, &items, &bytes, table_has_local(t) ? &lc :
		    NULL);
	json_t *j = json_pack("{s:o,s:s,s:o,s:s,s:f,s:I,s:I,s:s,s:s}",
	    "AttributeDefinitions", defs,
	    "TableName", t->name,
	    "KeySchema", key_schema_json(t),
	    "TableStatus", status_name(t->status),
	    "CreationDateTime", (double) t->created_ms / 1000.0,
	    "TableSizeBytes", (json_int_t) bytes,
	    "ItemCount", (json_int_t) items,
	    "TableArn", arn,
	    "TableId", t->uuid);
	if (j == NULL)
		return NULL;
	/* Decreases are counted per UTC day: yesterday's show as 0. */
	int64_t today = (int64_t) time(NULL) / 86400;
	json_t *pt = json_pack("{s:I,s:I,s:I}", "NumberOfDecreasesToday",
	    (json_int_t) (t->decreases_day == today ? t->decreases_today : 0),
	    "ReadCapacityUnits", (json_int_t) t->rcu,
	    "WriteCapacityUnits", (json_int_t) t->wcu);
	if (t->last_increase_ms != 0)
		json_object_set_new(pt, "LastIncreaseDateTime",
		    json_real((double) t->last_increase_ms / 1000.0));
	if (t->last_decrease_ms != 0)
		json_object_set_new(pt, "LastDecreaseDateTime",
		    json_real((double) t->last_decrease_ms / 1000.0));
	json_object_set_new(j, "ProvisionedThroughput", pt);
	json_t *bms = json_pack("{s:s}", "BillingMode",
	    t->billing == BILLING_PAY_PER_REQUEST ? "PAY_PER_REQUEST" :
	    "PROVISIONED");
	if (t->billing == BILLING_PAY_PER_REQUEST)
		json_object_set_new(bms, "LastUpdateToPayPerRequestDateTime",
		    json_real((double) (t->billing_changed_ms != 0 ?
		    t->billing_changed_ms : t->created_ms) / 1000.0));
	json_object_set_new(j, "BillingModeSummary", bms);
	bool busy = t->n_indexes > 0 && describe_indexes(c, t, with_counts,
	    counted && table_has_local(t) ? &lc : NULL, arn, j);
	if (t->status == TABLE_ACTIVE && (busy || index_deleting(c, t)))
		json_object_set_new(j, "TableStatus", json_string("UPDATING"));
	json_object_set_new(j, "DeletionProtectionEnabled", json_false());
	if (t->restore_arn != NULL)
		json_object_set_new(j, "RestoreSummary", ops_backup_summary(c,
		    t));
	return j;
}

/* Reads one AttributeDefinitions / KeySchema element's two strings. */
static bool
pair(json_t *e, const char *k1, const char **v1, const char *k2,
    const char **v2, const char *member, reply *out)
{
	if (!json_is_object(e)) {
		errors_reply(out, ERR_SERIALIZATION,
		    "Unexpected value type in payload for member %s", member);
		return false;
	}
	return req_string(e, k1, v1, out) && req_string(e, k2, v2, out);
}

static val_type
attr_type(const char *s)
{
	if (s == NULL)
		return 0;
	if (strcmp(s, "S") == 0)
		return VAL_S;
	if (strcmp(s, "N") == 0)
		return VAL_N;
	if (strcmp(s, "B") == 0)
		return VAL_B;
	return 0;
}

#define MAX_DEFS 64 /* AttributeDefinitions of one request */

/*
 * A key attribute's name is 1 to 255 long (DynamoDB's API reference,
 * KeySchemaElement and AttributeDefinition), checked with the other shapes
 * of element i of list `list`. Other attributes' names may be 64 KB.
 */
static void
check_key_name(req_errors *e, const char *name, const char *list, size_t i)
{
	char member[96];
	snprintf(member, sizeof(member), "%s.%zu.member.attributeName", list,
	    i + 1);
	req_check_length(e, name, 1, 255, member);
}

/*
 * Reads AttributeDefinitions (defs_j; NULL when absent) into dn and dt
 * (at most MAX_DEFS each, borrowed from the JSON) and *nd, adding their
 * violations to *e. Returns true, or false after filling *out for an
 * element of the wrong JSON type.
 */
static bool
read_defs(json_t *defs_j, req_errors *e, const char **dn, const char **dt,
    size_t *nd, reply *out)
{
	*nd = defs_j != NULL ? json_array_size(defs_j) : 0;
	if (*nd > MAX_DEFS) {
		req_errors_add(e, "Value '[...]' at 'attributeDefinitions' "
		    "failed to satisfy constraint: Member must have length "
		    "less than or equal to %d", MAX_DEFS);
		*nd = 0;
	}
	for (size_t i = 0; i < *nd; i++) {
		if (!pair(json_array_get(defs_j, i), "AttributeName", &dn[i],
		    "AttributeType", &dt[i], "AttributeDefinitions", out))
			return false;
		if (dn[i] == NULL)
			req_errors_add(e, "Value null at "
			    "'attributeDefinitions.%zu.member.attributeName' "
			    "failed to satisfy constraint: Member must not be "
			    "null", i + 1);
		else
			check_key_name(e, dn[i], "attributeDefinitions", i);
		if (attr_type(dt[i]) == 0)
			req_errors_add(e, "Value '%s' at "
			    "'attributeDefinitions.%zu.member.attributeType' "
			    "failed to satisfy constraint: Member must satisfy "
			    "enum value set: [B, N, S]",
			    dt[i] != NULL ? dt[i] : "null", i + 1);
	}
	return true;
}

void
ops_table_create(api_ctx *c, json_t *body, reply *out)
{
	const char *name, *billing;
	json_t *defs_j, *keys_j, *pt;
	req_errors e = { 0 };
	index_spec ix;
	table t;
	json_int_t rcu = 0, wcu = 0;

	memset(&t, 0, sizeof(t));
	if (!req_string(body, "TableName", &name, out) ||
	    !req_array(body, "AttributeDefinitions", &defs_j, out) ||
	    !req_array(body, "KeySchema", &keys_j, out) ||
	    !req_string(body, "BillingMode", &billing, out) ||
	    !req_object(body, "ProvisionedThroughput", &pt, out))
		return;
	/* Shape checks, collected as DynamoDB collects them. */
	if (defs_j == NULL)
		req_errors_add(&e, "Value null at 'attributeDefinitions' "
		    "failed to satisfy constraint: Member must not be null");
	req_check_table_name(&e, name, "tableName");
	if (keys_j == NULL)
		req_errors_add(&e, "Value null at 'keySchema' failed to "
		    "satisfy constraint: Member must not be null");
	else if (json_array_size(keys_j) < 1 || json_array_size(keys_j) > 2)
		req_errors_add(&e, "Value '%s' at 'keySchema' failed to "
		    "satisfy constraint: Member must have length %s", "[...]",
		    json_array_size(keys_j) < 1 ?
		    "greater than or equal to 1" : "less than or equal to 2");
	req_check_billing_mode(&e, billing, "billingMode");
	if (pt != NULL && !index_spec_read_throughput(pt,
	    "provisionedThroughput", &e, &rcu, &wcu, out))
		return;
	size_t nd, nk = keys_j != NULL ? json_array_size(keys_j) : 0;
	const char *dn[MAX_DEFS], *dt[MAX_DEFS], *kn[2] = { NULL, NULL },
	    *kt[2] = { NULL, NULL };
	if (!read_defs(defs_j, &e, dn, dt, &nd, out))
		return;
	for (size_t i = 0; i < nk && i < 2; i++) {
		if (!pair(json_array_get(keys_j, i), "AttributeName", &kn[i],
		    "KeyType", &kt[i], "KeySchema", out))
			return;
		if (kn[i] == NULL)
			req_errors_add(&e, "Value null at "
			    "'keySchema.%zu.member.attributeName' failed to "
			    "satisfy constraint: Member must not be null", i + 1);
		else
			check_key_name(&e, kn[i], "keySchema", i);
		if (kt[i] == NULL || (strcmp(kt[i], "HASH") != 0 &&
		    strcmp(kt[i], "RANGE") != 0))
			req_errors_add(&e, "Value '%s' at "
			    "'keySchema.%zu.member.keyType' failed to satisfy "
			    "constraint: Member must satisfy enum value set: "
			    "[HASH, RANGE]", kt[i] != NULL ? kt[i] : "null",
			    i + 1);
	}
	if (!index_spec_read(c, body, &ix, &e, out) ||
	    req_errors_reply(&e, out))
		return;

	/* The service's own checks, in DynamoDB's order. */
	bool on_demand = billing != NULL &&
	    strcmp(billing, "PAY_PER_REQUEST") == 0;
	if (on_demand && pt != NULL) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter "
		    "values were invalid: Neither ReadCapacityUnits nor "
		    "WriteCapacityUnits can be specified when BillingMode is "
		    "PAY_PER_REQUEST");
		return;
	}
	if (!on_demand && pt == NULL) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter "
		    "values were invalid: ReadCapacityUnits and "
		    "WriteCapacityUnits must both be specified when "
		    "BillingMode is PROVISIONED");
		return;
	}
	if (!index_spec_throughput_in_bounds(rcu, wcu, out))
		return;
	if (nk > nd) {
		errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: Some "
		    "index key attribute have no definition");
		return;
	}
	for (size_t k = 0; k < nk; k++) {
		bool defined = false;
		for (size_t i = 0; i < nd; i++)
			defined |= strcmp(kn[k], dn[i]) == 0;
		if (!defined) {
			char keys[1024], dl[2048];
			snprintf(keys, sizeof(keys), "%s%s%s", kn[0],
			    nk > 1 ? ", " : "", nk > 1 ? kn[1] : "");
			dl[0] = '\0';
			for (size_t i = 0; i < nd; i++) {
				if (i > 0)
					strncat(dl, ", ",
					    sizeof(dl) - strlen(dl) - 1);
				strncat(dl, dn[i], sizeof(dl) - strlen(dl) - 1);
			}
			errors_reply(out, ERR_VALIDATION, "One or more "
			    "parameter values were invalid: Some index key "
			    "attributes are not defined in "
			    "AttributeDefinitions. Keys: [%s], "
			    "AttributeDefinitions: [%s]", keys, dl);
			return;
		}
	}
	if (nk == 2 && strcmp(kn[0], kn[1]) == 0) {
		errors_reply(out, ERR_VALIDATION, "Both the Hash Key and the "
		    "Range Key element in the KeySchema have the same name");
		return;
	}
	if (strcmp(kt[0], "HASH") != 0) {
		errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: The "
		    "first KeySchemaElement is not a HASH key type");
		return;
	}
	if (nk == 2 && strcmp(kt[1], "RANGE") != 0) {
		errors_reply(out, ERR_VALIDATION, "Invalid KeySchema: The "
		    "second KeySchemaElement is not a RANGE key type");
		return;
	}
	/* With indexes, index_spec_check matches definitions to keys. */
	if (!index_spec_given(&ix) && nk != nd) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter "
		    "values were invalid: Number of attributes in KeySchema "
		    "does not exactly match number of attributes defined in "
		    "AttributeDefinitions");
		return;
	}
	for (size_t i = 0; i < nd; i++)
		for (size_t k = i + 1; k < nd; k++)
			if (strcmp(dn[i], dn[k]) == 0) {
				errors_reply(out, ERR_VALIDATION, "Cannot have "
				    "two attributes with the same name");
				return;
			}

	key_def defs[MAX_DEFS];
	for (size_t i = 0; i < nd; i++) {
		defs[i].name = (char *) dn[i];
		defs[i].type = attr_type(dt[i]);
	}
	index_spec_table it = { .hash = kn[0], .range = nk == 2 ? kn[1] :
	    NULL, .defs = defs, .n_defs = nd, .on_demand = on_demand };
	if (!index_spec_check(c, &ix, &it, &t.indexes, &t.n_indexes, out))
		return;

	table_tag *tags;
	size_t n_tags;
	if (!ops_tags_read(c, body, "Tags", false, &tags, &n_tags, out))
		return;

	/* Build the table; the catalog node fills in the rest. */
	for (size_t i = 0; i < nd; i++) {
		if (strcmp(dn[i], kn[0]) == 0)
			t.hash = defs[i];
		else if (nk == 2 && strcmp(dn[i], kn[1]) == 0)
			t.range = defs[i];
	}
	t.name = (char *) name;
	t.uuid = (char *) "";
	t.attr_defs = defs;
	t.n_attr_defs = nd;
	t.billing = on_demand ? BILLING_PAY_PER_REQUEST : BILLING_PROVISIONED;
	t.rcu = (uint64_t) rcu;
	t.wcu = (uint64_t) wcu;
	t.tags = tags;
	t.n_tags = n_tags;

	rpc_request req = { .op = RPC_CREATE_TABLE, .table = &t };
	rpc_response resp;
	kv_err rv = conn_call(c->r, 0, &req, c->a, &resp);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	if (resp.code == KV_TABLE_EXISTS)
		errors_reply(out, ERR_RESOURCE_IN_USE,
		    "Table already exists: %s", name);
	else
		ops_table_created(c, &resp, out);
	wire_response_fini(&resp);
}

void
ops_table_created(api_ctx *c, const rpc_response *resp, reply *out)
{
	if (resp->code != KV_OK || resp->table == NULL) {
		errors_from_kv(out, resp->code != KV_OK ? resp->code :
		    KV_PROTO);
		return;
	}
	route_refresh(c->r);
	api_reply_json(out, json_pack("{s:o}", "TableDescription",
	    ops_table_json(c, resp->table, false)));
}

/*
 * ops_change_table makes *t a borrowed table that names `name` for
 * a change request to the catalog node, with the key and billing mode every table
 * on the wire must have (the catalog node reads only what the change
 * needs).
 */
void
ops_change_table(table *t, const char *name, billing_mode billing)
{
	memset(t, 0, sizeof(*t));
	t->name = (char *) name;
	t->uuid = (char *) "";
	t->hash.name = (char *) "";
	t->hash.type = VAL_S;
	t->billing = billing;
}

bool
ops_table_name(json_t *body, const char **name, reply *out)
{
	req_errors e = { 0 };
	if (!req_string(body, "TableName", name, out))
		return false;
	req_check_table_name(&e, *name, "tableName");
	return !req_errors_reply(&e, out);
}

static void
table_not_found(reply *out, const char *name)
{
	errors_reply(out, ERR_RESOURCE_NOT_FOUND,
	    "Requested resource not found: Table: %s not found", name);
}

/*
 * Reads TableName, refreshes the catalog and finds the table: returns it
 * with the route's read lock held (route_read_unlock after), or NULL
 * after answering the error.
 */
static const table *
control_find(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	if (!ops_table_name(body, &name, out))
		return NULL;
	kv_err rv = route_refresh(c->r);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return NULL;
	}
	route_read_lock();
	const table *t = catalog_find(route_current(c->r), name,
	    strlen(name));
	if (t == NULL) {
		route_read_unlock();
		table_not_found(out, name);
	}
	return t;
}

void
ops_table_describe(api_ctx *c, json_t *body, reply *out)
{
	const table *t = control_find(c, body, out);
	if (t == NULL)
		return;
	json_t *d = ops_table_json(c, t, true);
	route_read_unlock();
	api_reply_json(out, json_pack("{s:o}", "Table", d));
}

void
ops_table_list(api_ctx *c, json_t *body, reply *out)
{
	const char *start;
	json_t *limit_j;
	req_errors e = { 0 };
	json_int_t limit = 100;

	if (!req_string(body, "ExclusiveStartTableName", &start, out) ||
	    !req_integer(body, "Limit", &limit_j, out))
		return;
	if (start != NULL)
		req_check_table_name(&e, start, "exclusiveStartTableName");
	if (limit_j != NULL) {
		limit = json_integer_value(limit_j);
		if (limit < 1)
			req_errors_add(&e, "Value '%lld' at 'limit' failed to "
			    "satisfy constraint: Member must have value greater "
			    "than or equal to 1", (long long) limit);
		else if (limit > 100)
			req_errors_add(&e, "Value '%lld' at 'limit' failed to "
			    "satisfy constraint: Member must have value less "
			    "than or equal to 100", (long long) limit);
	}
	if (req_errors_reply(&e, out))
		return;
	kv_err rv = route_refresh(c->r);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	json_t *names = json_array();
	json_t *j = json_object();
	route_read_lock();
	const catalog *cat = route_current(c->r);
	const char *last = NULL;
	size_t i = 0;
	/* Tables are sorted by name: skip to the one after `start`. */
	while (start != NULL && i < cat->n_tables &&
	    strcmp(cat->tables[i].name, start) <= 0)
		i++;
	for (; i < cat->n_tables; i++) {
		/* A GSI's own table is no table of the user's. */
		if (table_is_index(&cat->tables[i]))
			continue;
		if ((json_int_t) json_array_size(names) == limit) {
			json_object_set_new(j, "LastEvaluatedTableName",
			    json_string(last));
			break;
		}
		last = cat->tables[i].name;
		json_array_append_new(names, json_string(last));
	}
	route_read_unlock();
	json_object_set_new(j, "TableNames", names);
	api_reply_json(out, j);
}

/* "created" for the catalog node's KV_IN_USE message "CREATING", etc. */
static const char *
in_use_verb(const char *status)
{
	if (status != NULL && strcmp(status, "CREATING") == 0)
		return "created";
	if (status != NULL && strcmp(status, "UPDATING") == 0)
		return "updated";
	return "deleted";
}

/*
 * Checks the catalog node's answer to a DeleteTable or UpdateTable change
 * of table `name` (about its index `index`, or NULL): true when it
 * carries the table; otherwise fills *out with DynamoDB's error,
 * finalises *resp and returns false.
 */
bool
ops_change_ok(rpc_response *resp, const char *name, const char *index,
    reply *out)
{
	if (resp->code == KV_OK && resp->table != NULL)
		return true;
	if (resp->code == KV_NO_TABLE && index != NULL &&
	    resp->message != NULL && strcmp(resp->message, "index") == 0) {
		index_spec_not_found(out, name, index);
	} else if (resp->code == KV_NO_TABLE) {
		table_not_found(out, name);
	} else if (resp->code == KV_IN_USE) {
		errors_reply(out, ERR_RESOURCE_IN_USE,
		    "Attempt to change a resource which is still in use: "
		    "Table is being %s: %s", in_use_verb(resp->message), name);
	} else if (resp->code == KV_EINVAL && resp->message != NULL) {
		errors_reply(out, ERR_VALIDATION, "%s", resp->message);
	} else if (resp->code == KV_BUSY && resp->message != NULL) {
		errors_reply(out, ERR_LIMIT_EXCEEDED, "%s", resp->message);
	} else {
		errors_from_kv(out, resp->code != KV_OK ? resp->code :
		    KV_PROTO);
	}
	wire_response_fini(resp);
	return false;
}

/*
 * Answers a DeleteTable or UpdateTable from the catalog node's response
 * (which it finalises): the new TableDescription, or DynamoDB's error.
 */
static void
change_reply(api_ctx *c, rpc_response *resp, const char *name, reply *out)
{
	if (!ops_change_ok(resp, name, NULL, out))
		return;
	route_refresh(c->r);
	api_reply_json(out, json_pack("{s:o}", "TableDescription",
	    ops_table_json(c, resp->table, false)));
	wire_response_fini(resp);
}

void
ops_table_delete(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	if (!ops_table_name(body, &name, out))
		return;
	rpc_request req = { .op = RPC_DELETE_TABLE, .table_name = name };
	rpc_response resp;
	kv_err rv = conn_call(c->r, 0, &req, c->a, &resp);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	change_reply(c, &resp, name, out);
}

/*
 * DynamoDB's answer to a create or delete of an index shows the table
 * UPDATING and the index CREATING with Backfilling false, or DELETING
 * (ack-api-quirks DDB-TABLE-148 and -165), whatever has happened since.
 * The base table lists an index being deleted, marked, until its table
 * is dropped; should the answer come after that, the entry is made from
 * the definition the table had (ch->def). Borrows everything; d may be
 * NULL.
 */
static void
show_online_change(json_t *d, const index_change *ch, const char *arn)
{
	if (d == NULL)
		return;
	const char *st = json_string_value(json_object_get(d, "TableStatus"));
	if (st != NULL && strcmp(st, "ACTIVE") == 0)
		json_object_set_new(d, "TableStatus", json_string("UPDATING"));
	json_t *l = json_object_get(d, "GlobalSecondaryIndexes"), *g = NULL;
	for (size_t i = 0; l != NULL && i < json_array_size(l); i++) {
		json_t *x = json_array_get(l, i);
		const char *n = json_string_value(json_object_get(x,
		    "IndexName"));
		if (n != NULL && strcmp(n, ch->def.name) == 0)
			g = x;
	}
	if (ch->kind == INDEX_CHANGE_CREATE && g != NULL) {
		json_object_set_new(g, "IndexStatus", json_string("CREATING"));
		json_object_set_new(g, "Backfilling", json_false());
	} else if (ch->kind == INDEX_CHANGE_DELETE && g == NULL) {
		if (l == NULL) {
			l = json_array();
			json_object_set_new(d, "GlobalSecondaryIndexes", l);
		}
		json_array_append_new(l, index_spec_describe(&ch->def, arn,
		    NULL, "DELETING", -1, 0, 0));
	}
}

/*
 * Sends one index change of table `name` (billing mode `billing`) to the
 * catalog node. Returns true with *resp holding the table (finalise it),
 * or false after filling *out.
 */
static bool
send_index_change(api_ctx *c, const char *name, billing_mode billing,
    const index_change *ch, rpc_response *resp, reply *out)
{
	static const uint32_t op[] = {
		[INDEX_CHANGE_CREATE] = RPC_INDEX_CREATE,
		[INDEX_CHANGE_DELETE] = RPC_INDEX_DELETE,
		[INDEX_CHANGE_THROUGHPUT] = RPC_INDEX_THROUGHPUT,
	};
	key_def defs[2 * INDEX_KEY_PARTS];
	table t;

	/* Only the name and the index count. */
	ops_change_table(&t, name, billing);
	if (ch->kind == INDEX_CHANGE_CREATE) {
		/*
		 * The definitions of the new keys only: DynamoDB keeps no
		 * definition that no key uses, and ignores the rest of the
		 * request's (ack-api-quirks DDB-TABLE-162).
		 */
		const key_def *k[2 * INDEX_KEY_PARTS];
		size_t nk = index_key_all(&ch->def, k, NULL);
		for (size_t i = 0; i < nk; i++)
			defs[t.n_attr_defs++] = *k[i];
		t.attr_defs = defs;
	}
	t.indexes = (index_def *) &ch->def;
	t.n_indexes = 1;
	rpc_request req = { .op = RPC_INDEX_UPDATE, .table = &t,
	    .limit = op[ch->kind] };
	kv_err rv = conn_call(c->r, 0, &req, c->a, resp);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return false;
	}
	return ops_change_ok(resp, name, ch->def.name, out);
}

/*
 * A copy of table `name` from the router's catalog into *out, with each
 * GSI's current throughput (its own table's) in its index_def's rcu and
 * wcu, as index_spec_plan wants. KV_NO_TABLE, KV_ENOMEM or KV_OK (free
 * with table_fini).
 */
static kv_err
current_table(api_ctx *c, const char *name, table *out)
{
	kv_err rv = KV_NO_TABLE;
	memset(out, 0, sizeof(*out));
	route_read_lock();
	const catalog *cat = route_current(c->r);
	const table *t = catalog_find(cat, name, strlen(name));
	if (t != NULL && (rv = table_copy(t, out)) == KV_OK) {
		for (size_t i = 0; i < out->n_indexes; i++) {
			index_def *d = &out->indexes[i];
			const table *it = d->local || d->table_id == 0 ? NULL :
			    table_find_id(cat, d->table_id);
			if (it != NULL) {
				d->rcu = it->rcu;
				d->wcu = it->wcu;
			}
		}
	}
	route_read_unlock();
	return rv;
}

/*
 * UpdateTable: a new ProvisionedThroughput, a new BillingMode, and
 * GlobalSecondaryIndexUpdates (one index created or deleted, any number
 * of index throughputs changed), with the AttributeDefinitions a new
 * index's keys need. The router runs DynamoDB's checks against the table
 * its catalog holds, then sends the changes one by one: the index create
 * or delete first (the catalog node may still refuse it: one at a time
 * per table), then each index's throughput, then the table's own change.
 * The table's goes last because the catalog node changes an index only
 * while its table is ACTIVE, and a table change leaves it UPDATING until
 * every owner has heard; the catalog node records each change with the
 * tables concerned UPDATING or CREATING and tells the owners. A failure
 * part way leaves the earlier changes made (DynamoDB's are all or none):
 * the checks here make that unlikely. DynamoDB's other UpdateTable
 * features (streams, encryption, replicas, deletion protection, on-demand
 * and warm throughput) are not served yet and say so.
 */
void
ops_table_update(api_ctx *c, json_t *body, reply *out)
{
	const char *name, *billing;
	json_t *pt, *defs_j;
	req_errors e = { 0 };
	index_updates ix;
	json_int_t rcu = 0, wcu = 0;
	const char *dn[MAX_DEFS], *dt[MAX_DEFS];
	size_t nd;
	static const char *const unsupported[] = {
		"StreamSpecification", "SSESpecification", "ReplicaUpdates",
		"TableClass", "DeletionProtectionEnabled", "OnDemandThroughput",
		"WarmThroughput",
	};

	if (!req_array(body, "AttributeDefinitions", &defs_j, out) ||
	    !req_string(body, "TableName", &name, out) ||
	    !req_string(body, "BillingMode", &billing, out) ||
	    !req_object(body, "ProvisionedThroughput", &pt, out))
		return;
	/*
	 * Shape checks, collected in the order of UpdateTable's members in
	 * DynamoDB's API reference (DynamoDB's own order across members was
	 * not found; within GlobalSecondaryIndexUpdates it is dynalite's).
	 */
	if (!read_defs(defs_j, &e, dn, dt, &nd, out))
		return;
	req_check_table_name(&e, name, "tableName");
	req_check_billing_mode(&e, billing, "billingMode");
	if (pt != NULL && !index_spec_read_throughput(pt,
	    "provisionedThroughput", &e, &rcu, &wcu, out))
		return;
	if (!index_spec_read_updates(c, body, &ix, &e, out) ||
	    req_errors_reply(&e, out))
		return;
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(*unsupported);
	    i++) {
		if (json_object_get(body, unsupported[i]) == NULL)
			continue;
		errors_reply(out, ERR_VALIDATION, "UpdateTable with %s is not "
		    "supported by this cluster yet", unsupported[i]);
		return;
	}
	/* An empty list counts as absent here, and is refused with any
	 * other change (ack-api-quirks DDB-TABLE-359). */
	if (pt == NULL && billing == NULL && ix.n == 0) {
		errors_reply(out, ERR_VALIDATION, "At least one of "
		    "ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
		    "GlobalSecondaryIndexUpdates or SSESpecification or "
		    "ReplicaUpdates is required");
		return;
	}
	if (ix.list != NULL && ix.n == 0) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter values "
		    "were invalid: List of GlobalSecondaryIndexUpdates is "
		    "empty");
		return;
	}
	if (!index_spec_throughput_in_bounds(rcu, wcu, out) ||
	    !index_spec_check_updates(&ix, out))
		return;

	/* The table as the catalog has it; the billing mode it will have. */
	kv_err rv = route_refresh(c->r);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	table cur;
	if ((rv = current_table(c, name, &cur)) != KV_OK) {
		if (rv == KV_NO_TABLE)
			table_not_found(out, name);
		else
			errors_from_kv(out, rv);
		return;
	}
	billing_mode now = cur.billing;
	billing_mode want = billing == NULL ? now :
	    strcmp(billing, "PAY_PER_REQUEST") == 0 ?
	    BILLING_PAY_PER_REQUEST : BILLING_PROVISIONED;
	index_change *changes = NULL;
	size_t n_changes = 0;
	key_def defs[MAX_DEFS];
	rpc_response resp;
	bool have_resp = false;
	if (want == BILLING_PAY_PER_REQUEST && pt != NULL) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter "
		    "values were invalid: Neither ReadCapacityUnits nor "
		    "WriteCapacityUnits can be specified when BillingMode is "
		    "PAY_PER_REQUEST");
		goto out;
	}
	if (billing != NULL && want == BILLING_PROVISIONED && pt == NULL) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter "
		    "values were invalid: ProvisionedThroughput must be "
		    "specified when BillingMode is PROVISIONED");
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		defs[i].name = (char *) dn[i];
		defs[i].type = attr_type(dt[i]);
	}
	index_spec_base b = { .cur = &cur, .want = want,
	    .table_pt = pt != NULL, .defs = defs, .n_defs = nd,
	    .defs_given = defs_j != NULL };
	/* Also without index changes: a switch to PROVISIONED needs each
	 * GSI's throughput. */
	if (!index_spec_plan(c, &ix, &b, &changes, &n_changes, out))
		goto out;
	/* Re-sending PAY_PER_REQUEST changes nothing of the table. */
	bool table_change = pt != NULL || (billing != NULL &&
	    !(want == BILLING_PAY_PER_REQUEST && now == want));
	if (table_change && n_changes > 0 && want == BILLING_PROVISIONED &&
	    now == want && cur.rcu == (uint64_t) rcu &&
	    cur.wcu == (uint64_t) wcu) {
		/*
		 * The catalog node's refusal of an unchanged throughput
		 * (node/catalog/catalog_node.c), made here before the index
		 * changes go out so that the request stays all or none.
		 */
		errors_reply(out, ERR_VALIDATION, "The provisioned throughput "
		    "for the table will not change. The requested value equals "
		    "the current value. Current ReadCapacityUnits provisioned "
		    "for the table: %llu. Requested ReadCapacityUnits: %lld. "
		    "Current WriteCapacityUnits provisioned for the table: "
		    "%llu. Requested WriteCapacityUnits: %lld. Refer to the "
		    "Amazon DynamoDB Developer Guide for current limits and "
		    "how to request higher limits.",
		    (unsigned long long) cur.rcu, (long long) rcu,
		    (unsigned long long) cur.wcu, (long long) wcu);
		goto out;
	}
	if (!table_change && n_changes == 0) {
		/* Nothing to change: accepted, and the table stays ACTIVE. */
		api_reply_json(out, json_pack("{s:o}", "TableDescription",
		    ops_table_json(c, &cur, false)));
		goto out;
	}

	for (size_t i = 0; i < n_changes; i++) {
		if (have_resp)
			wire_response_fini(&resp);
		have_resp = send_index_change(c, name, now, &changes[i],
		    &resp, out);
		if (!have_resp)
			goto out;
	}
	if (table_change) {
		table t;
		/* Only the name, billing and units count. */
		ops_change_table(&t, name, want);
		t.rcu = (uint64_t) rcu;
		t.wcu = (uint64_t) wcu;
		rpc_request req = { .op = RPC_UPDATE_TABLE, .table = &t };
		if (have_resp)
			wire_response_fini(&resp);
		have_resp = false;
		rv = conn_call(c->r, 0, &req, c->a, &resp);
		if (rv != KV_OK) {
			errors_from_kv(out, rv);
			goto out;
		}
		if (!(have_resp = ops_change_ok(&resp, name, NULL, out)))
			goto out;
	}

	route_refresh(c->r);
	json_t *d = ops_table_json(c, resp.table, false);
	/* The create or delete, if any, is the first change. */
	if (n_changes > 0 && changes[0].kind != INDEX_CHANGE_THROUGHPUT) {
		char arn[512];
		errors_table_arn(arn, sizeof(arn), c->region, name);
		show_online_change(d, &changes[0], arn);
	}
	api_reply_json(out, json_pack("{s:o}", "TableDescription", d));
out:
	if (have_resp)
		wire_response_fini(&resp);
	table_fini(&cur);
}

/*
 * UpdateTimeToLive: turns Time to Live on (with its attribute) or off;
 * the catalog node keeps it and every node's sweep reads it from its
 * view (node/ttl.c). It answers the specification as asked. DynamoDB
 * refuses a second change of the same table within an hour; here a table
 * may be switched as often as a test likes.
 */
void
ops_table_ttl_update(api_ctx *c, json_t *body, reply *out)
{
	const char *name, *attr = NULL;
	json_t *spec, *en = NULL;
	bool enabled = false;
	req_errors e = { 0 };

	if (!req_string(body, "TableName", &name, out) ||
	    !req_object(body, "TimeToLiveSpecification", &spec, out))
		return;
	if (spec != NULL && (!req_string(spec, "AttributeName", &attr, out) ||
	    !req_bool(spec, "Enabled", &enabled, out)))
		return;
	req_check_table_name(&e, name, "tableName");
	if (spec == NULL) {
		req_errors_add(&e, "Value null at 'timeToLiveSpecification' "
		    "failed to satisfy constraint: Member must not be null");
	} else {
		en = json_object_get(spec, "Enabled");
		if (en == NULL || json_is_null(en))
			req_errors_add(&e, "Value null at "
			    "'timeToLiveSpecification.enabled' failed to "
			    "satisfy constraint: Member must not be null");
		if (attr == NULL)
			req_errors_add(&e, "Value null at "
			    "'timeToLiveSpecification.attributeName' failed to "
			    "satisfy constraint: Member must not be null");
		else if (strlen(attr) > 255)
			req_errors_add(&e, "Value '%s' at "
			    "'timeToLiveSpecification.attributeName' failed to "
			    "satisfy constraint: Member must have length less "
			    "than or equal to 255", attr);
	}
	if (req_errors_reply(&e, out))
		return;
	if (attr[0] == '\0') {
		errors_reply(out, ERR_VALIDATION, "TimeToLiveSpecification."
		    "AttributeName must be non empty");
		return;
	}
	table t;
	ops_change_table(&t, name, BILLING_PAY_PER_REQUEST);
	t.ttl_attr = enabled ? (char *) attr : NULL;
	rpc_request req = { .op = RPC_TTL_UPDATE, .table = &t };
	rpc_response resp;
	kv_err rv = conn_call(c->r, 0, &req, c->a, &resp);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	if (!ops_change_ok(&resp, name, NULL, out))
		return;
	wire_response_fini(&resp);
	api_reply_json(out, json_pack("{s:{s:s,s:b}}",
	    "TimeToLiveSpecification", "AttributeName", attr, "Enabled",
	    enabled));
}

void
ops_table_ttl_describe(api_ctx *c, json_t *body, reply *out)
{
	const table *t = control_find(c, body, out);
	if (t == NULL)
		return;
	json_t *d = t->ttl_attr != NULL ?
	    json_pack("{s:s,s:s}", "TimeToLiveStatus", "ENABLED",
	    "AttributeName", t->ttl_attr) :
	    json_pack("{s:s}", "TimeToLiveStatus", "DISABLED");
	route_read_unlock();
	api_reply_json(out, json_pack("{s:o}", "TimeToLiveDescription", d));
}
