/*
 * ops_backup.c — on-demand backups: CreateBackup, DescribeBackup,
 * ListBackups, DeleteBackup, RestoreTableFromBackup, and
 * DescribeContinuousBackups / UpdateContinuousBackups.
 *
 * The catalog node keeps the backups and drives the copies (RPC_BACKUP;
 * node/backup.h says how a backup is taken and restored). A backup's ARN
 * is DynamoDB's: the table's ARN, "/backup/", then the creation time in
 * milliseconds (14 digits), a dash and 8 hex digits; the catalog node
 * knows each backup by that last part, the router adds the region.
 *
 * As in DynamoDB, CreateBackup answers CREATING and the backup becomes
 * AVAILABLE once every partition is copied (here within a second or two
 * for a small table); a restore creates the table CREATING, with a
 * RestoreSummary, and it becomes ACTIVE once every partition is filled;
 * its global indexes are then filled from its items (Backfilling).
 * Restored tables get the backup's key schema, indexes (less those the
 * overrides leave out), billing mode and throughput (or the overrides),
 * and, as DynamoDB documents, not its tags or Time to Live setting.
 *
 * Continuous backups: on-demand backups are supported, point-in-time
 * recovery is not. DescribeContinuousBackups answers ENABLED with point-in-
 * time recovery DISABLED (what DynamoDB answers for a table without
 * PITR); UpdateContinuousBackups accepts turning PITR off and refuses
 * turning it on with a ValidationException that says so.
 *
 * Messages: "Table not found: NAME", "Backup not found: ARN" and "Table
 * already exists: NAME" are DynamoDB's; the in-use messages and the
 * override checks are ours, in DynamoDB's style.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "errors.h"
#include "index_key.h"
#include "index_spec.h"
#include "ops_table.h"
#include "request.h"
#include "route.h"

#define BACKUP_NAME_MIN 3
#define BACKUP_NAME_MAX 255
#define BACKUP_ARN_MIN 37
#define BACKUP_ARN_MAX 1024

/* The full ARN of backup b into buf. */
static void
backup_arn(api_ctx *c, const backup_rec *b, char *buf, size_t len)
{
	char table_arn[512];
	errors_table_arn(table_arn, sizeof(table_arn), c->region, b->src.name);
	snprintf(buf, len, "%s/backup/%s", table_arn, b->arn);
}

static const char *
status_name(backup_status s)
{
	switch (s) {
	case BACKUP_CREATING: return "CREATING";
	case BACKUP_AVAILABLE: return "AVAILABLE";
	case BACKUP_DELETED: return "DELETED";
	}
	return "AVAILABLE";
}

/* BackupDetails. */
static json_t *
details(api_ctx *c, const backup_rec *b)
{
	char arn[700];
	backup_arn(c, b, arn, sizeof(arn));
	return json_pack("{s:s,s:s,s:I,s:s,s:s,s:f}", "BackupArn", arn,
	    "BackupName", b->name,
	    "BackupSizeBytes", (json_int_t) b->size_bytes,
	    "BackupStatus", status_name(b->status),
	    "BackupType", "USER",
	    "BackupCreationDateTime", (double) b->created_ms / 1000.0);
}

static json_t *
key_schema(const key_def *hash, const key_def *range)
{
	json_t *ks = json_array();
	json_array_append_new(ks, json_pack("{s:s,s:s}", "AttributeName",
	    hash->name, "KeyType", "HASH"));
	if (range->name != NULL)
		json_array_append_new(ks, json_pack("{s:s,s:s}",
		    "AttributeName", range->name, "KeyType", "RANGE"));
	return ks;
}

static json_t *
throughput(uint64_t rcu, uint64_t wcu)
{
	return json_pack("{s:I,s:I}", "ReadCapacityUnits", (json_int_t) rcu,
	    "WriteCapacityUnits", (json_int_t) wcu);
}

/* SourceTableDetails and SourceTableFeatureDetails of b. */
static void
source(api_ctx *c, const backup_rec *b, json_t *desc)
{
	const table *t = &b->src;
	char arn[512];
	errors_table_arn(arn, sizeof(arn), c->region, t->name);
	json_object_set_new(desc, "SourceTableDetails",
	    json_pack("{s:s,s:s,s:s,s:I,s:o,s:f,s:o,s:I,s:s}",
	    "TableName", t->name, "TableId", t->uuid, "TableArn", arn,
	    "TableSizeBytes", (json_int_t) b->size_bytes,
	    "KeySchema", key_schema(&t->hash, &t->range),
	    "TableCreationDateTime", (double) t->created_ms / 1000.0,
	    "ProvisionedThroughput", throughput(t->rcu, t->wcu),
	    "ItemCount", (json_int_t) b->items,
	    "BillingMode", t->billing == BILLING_PAY_PER_REQUEST ?
	    "PAY_PER_REQUEST" : "PROVISIONED"));
	json_t *f = json_object();
	json_t *lists[2] = { NULL, NULL };
	for (size_t i = 0; i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		static const char *kinds[] = { "", "ALL", "KEYS_ONLY",
		    "INCLUDE" };
		json_t *proj = json_pack("{s:s}", "ProjectionType",
		    kinds[d->projection <= PROJECT_INCLUDE ? d->projection :
		    PROJECT_ALL]);
		if (d->projection == PROJECT_INCLUDE) {
			json_t *na = json_array();
			for (size_t k = 0; k < d->n_include; k++)
				json_array_append_new(na,
				    json_string(d->include[k]));
			json_object_set_new(proj, "NonKeyAttributes", na);
		}
		json_t *x = json_pack("{s:s,s:o,s:o}", "IndexName", d->name,
		    "KeySchema", index_spec_key_schema(d),
		    "Projection", proj);
		if (!d->local)
			json_object_set_new(x, "ProvisionedThroughput",
			    throughput(d->rcu, d->wcu));
		json_t **l = &lists[d->local ? 1 : 0];
		if (*l == NULL)
			*l = json_array();
		json_array_append_new(*l, x);
	}
	if (lists[0] != NULL)
		json_object_set_new(f, "GlobalSecondaryIndexes", lists[0]);
	if (lists[1] != NULL)
		json_object_set_new(f, "LocalSecondaryIndexes", lists[1]);
	json_object_set_new(f, "TimeToLiveDescription", t->ttl_attr != NULL ?
	    json_pack("{s:s,s:s}", "TimeToLiveStatus", "ENABLED",
	    "AttributeName", t->ttl_attr) :
	    json_pack("{s:s}", "TimeToLiveStatus", "DISABLED"));
	json_object_set_new(desc, "SourceTableFeatureDetails", f);
}

/* BackupDescription. */
static json_t *
description(api_ctx *c, const backup_rec *b)
{
	json_t *d = json_pack("{s:o}", "BackupDetails", details(c, b));
	source(c, b, d);
	return d;
}

/*
 * Sends RPC_BACKUP request req and unpacks the backups it answers into
 * *out (owned, *n of them; free with free_list). On failure answers *r
 * and returns false, except that KV_NO_TABLE, KV_IN_USE and
 * KV_TABLE_EXISTS come back in *code (when code is not NULL), unanswered,
 * for the caller's own message.
 */
static bool
call(api_ctx *c, rpc_request *req, backup_rec **out, size_t *n,
    kv_err *code, reply *r)
{
	rpc_response resp;
	*out = NULL;
	*n = 0;
	req->op = RPC_BACKUP;
	kv_err rv = conn_call(c->r, 0, req, c->a, &resp);
	if (rv != KV_OK) {
		errors_from_kv(r, rv);
		return false;
	}
	if (resp.code != KV_OK) {
		kv_err got = resp.code;
		const char *msg = resp.message;
		wire_response_fini(&resp);
		if (code != NULL && (got == KV_NO_TABLE || got == KV_IN_USE ||
		    got == KV_TABLE_EXISTS)) {
			*code = got;
			return false;
		}
		if (got == KV_EINVAL && msg != NULL)
			errors_reply(r, ERR_VALIDATION, "%s", msg);
		else
			errors_from_kv(r, got);
		return false;
	}
	*out = calloc(resp.n_blobs + 1, sizeof(backup_rec));
	if (*out == NULL) {
		wire_response_fini(&resp);
		errors_from_kv(r, KV_ENOMEM);
		return false;
	}
	for (size_t i = 0; i < resp.n_blobs; i++) {
		if ((rv = wire_unpack_backup(resp.blobs[i], resp.blob_lens[i],
		    &(*out)[i])) != KV_OK) {
			for (size_t k = 0; k < i; k++)
				backup_rec_fini(&(*out)[k]);
			free(*out);
			*out = NULL;
			wire_response_fini(&resp);
			errors_from_kv(r, rv);
			return false;
		}
		*n = i + 1;
	}
	wire_response_fini(&resp);
	return true;
}

static void
free_list(backup_rec *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		backup_rec_fini(&l[i]);
	free(l);
}

/* An unknown table: TableNotFound, not ResourceNotFound, for backups. */
static void
table_not_found(reply *out, const char *name)
{
	errors_reply(out, ERR_TABLE_NOT_FOUND, "Table not found: %s", name);
}

/*
 * Reads BackupArn and finds its last part (what the catalog node knows
 * the backup by): true with *suffix set, or false after answering (a
 * malformed ARN names no backup).
 */
static bool
backup_arn_read(json_t *body, const char **arn, const char **suffix,
    reply *out)
{
	req_errors e = { 0 };
	if (!req_string(body, "BackupArn", arn, out))
		return false;
	if (*arn == NULL)
		req_errors_add(&e, "Value null at 'backupArn' failed to satisfy "
		    "constraint: Member must not be null");
	else
		req_check_length(&e, *arn, BACKUP_ARN_MIN, BACKUP_ARN_MAX,
		    "backupArn");
	if (req_errors_reply(&e, out))
		return false;
	const char *b = strstr(*arn, ":table/");
	const char *s = b != NULL ? strstr(b, "/backup/") : NULL;
	if (strncmp(*arn, "arn:", 4) != 0 || s == NULL || s[8] == '\0') {
		errors_reply(out, ERR_BACKUP_NOT_FOUND, "Backup not found: %s",
		    *arn);
		return false;
	}
	*suffix = s + 8;
	return true;
}

void
ops_backup_create(api_ctx *c, json_t *body, reply *out)
{
	const char *name, *bname;
	req_errors e = { 0 };
	if (!ops_table_name(body, &name, out) ||
	    !req_string(body, "BackupName", &bname, out))
		return;
	if (bname == NULL) {
		req_errors_add(&e, "Value null at 'backupName' failed to "
		    "satisfy constraint: Member must not be null");
	} else {
		req_check_length(&e, bname, BACKUP_NAME_MIN, BACKUP_NAME_MAX,
		    "backupName");
		if (strspn(bname, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
		    "RSTUVWXYZ0123456789_.-") != strlen(bname))
			req_errors_add(&e, "Value '%s' at 'backupName' failed "
			    "to satisfy constraint: Member must satisfy regular "
			    "expression pattern: [a-zA-Z0-9_.-]+", bname);
	}
	if (req_errors_reply(&e, out))
		return;
	rpc_request req = { .limit = RPC_BACKUP_CREATE, .table_name = name,
	    .item = (const uint8_t *) bname, .item_len = strlen(bname) };
	backup_rec *l;
	size_t n;
	kv_err code = KV_OK;
	if (!call(c, &req, &l, &n, &code, out)) {
		if (code == KV_NO_TABLE)
			table_not_found(out, name);
		else if (code == KV_IN_USE)
			errors_reply(out, ERR_TABLE_IN_USE, "Table is being "
			    "created or deleted: %s", name);
		return;
	}
	if (n != 1) {
		free_list(l, n);
		errors_from_kv(out, KV_PROTO);
		return;
	}
	api_reply_json(out, json_pack("{s:o}", "BackupDetails",
	    details(c, &l[0])));
	free_list(l, n);
}

/* DescribeBackup and DeleteBackup: one backup, by ARN. */
static void
one(api_ctx *c, json_t *body, int what, reply *out)
{
	const char *arn, *suffix;
	if (!backup_arn_read(body, &arn, &suffix, out))
		return;
	rpc_request req = { .limit = what, .item = (const uint8_t *) suffix,
	    .item_len = strlen(suffix) };
	backup_rec *l;
	size_t n;
	kv_err code = KV_OK;
	if (!call(c, &req, &l, &n, &code, out)) {
		if (code == KV_NO_TABLE)
			errors_reply(out, ERR_BACKUP_NOT_FOUND,
			    "Backup not found: %s", arn);
		else if (code == KV_IN_USE)
			errors_reply(out, ERR_BACKUP_IN_USE, "Backup is in use "
			    "(being created, or being restored to a table): %s",
			    arn);
		return;
	}
	if (n != 1) {
		free_list(l, n);
		errors_from_kv(out, KV_PROTO);
		return;
	}
	api_reply_json(out, json_pack("{s:o}", "BackupDescription",
	    description(c, &l[0])));
	free_list(l, n);
}

void
ops_backup_describe(api_ctx *c, json_t *body, reply *out)
{
	one(c, body, RPC_BACKUP_DESCRIBE, out);
}

void
ops_backup_delete(api_ctx *c, json_t *body, reply *out)
{
	one(c, body, RPC_BACKUP_DELETE, out);
}

/* Reads a time bound of ListBackups (epoch seconds, a number). */
static bool
time_bound(json_t *body, const char *member, double *v, reply *out)
{
	json_t *j = json_object_get(body, member);
	if (j == NULL || json_is_null(j))
		return true;
	if (!json_is_number(j)) {
		errors_reply(out, ERR_SERIALIZATION, "class com.amazon.coral."
		    "value.json.numbers.TruncatingBigNumber can not be "
		    "converted to an Date");
		return false;
	}
	*v = json_number_value(j);
	return true;
}

void
ops_backup_list(api_ctx *c, json_t *body, reply *out)
{
	const char *name = NULL, *start, *type;
	json_t *limit_j;
	double lo = -1e300, hi = 1e300;
	json_int_t limit = 100;
	req_errors e = { 0 };
	if (!req_string(body, "TableName", &name, out) ||
	    !req_string(body, "ExclusiveStartBackupArn", &start, out) ||
	    !req_string(body, "BackupType", &type, out) ||
	    !req_integer(body, "Limit", &limit_j, out) ||
	    !time_bound(body, "TimeRangeLowerBound", &lo, out) ||
	    !time_bound(body, "TimeRangeUpperBound", &hi, out))
		return;
	if (name != NULL)
		req_check_table_name(&e, name, "tableName");
	if (limit_j != NULL) {
		limit = json_integer_value(limit_j);
		if (limit < 1 || limit > 100)
			req_errors_add(&e, "Value '%lld' at 'limit' failed to "
			    "satisfy constraint: Member must have value %s",
			    (long long) limit, limit < 1 ?
			    "greater than or equal to 1" :
			    "less than or equal to 100");
	}
	if (type != NULL && strcmp(type, "USER") != 0 &&
	    strcmp(type, "SYSTEM") != 0 && strcmp(type, "AWS_BACKUP") != 0 &&
	    strcmp(type, "ALL") != 0)
		req_errors_add(&e, "Value '%s' at 'backupType' failed to "
		    "satisfy constraint: Member must satisfy enum value set: "
		    "[USER, SYSTEM, AWS_BACKUP, ALL]", type);
	if (req_errors_reply(&e, out))
		return;
	rpc_request req = { .limit = RPC_BACKUP_LIST, .table_name = name };
	backup_rec *l;
	size_t n;
	if (!call(c, &req, &l, &n, NULL, out))
		return;
	json_t *sums = json_array();
	json_t *j = json_object();
	/* Only user backups exist here: SYSTEM and AWS_BACKUP list none. */
	bool user = type == NULL || strcmp(type, "USER") == 0 ||
	    strcmp(type, "ALL") == 0;
	/* In creation order (the catalog node keeps them so); the page
	 * starts after ExclusiveStartBackupArn. */
	bool started = start == NULL;
	char arn[700];
	for (size_t i = 0; user && i < n; i++) {
		const backup_rec *b = &l[i];
		backup_arn(c, b, arn, sizeof(arn));
		if (!started) {
			started = strcmp(arn, start) == 0;
			continue;
		}
		double t = (double) b->created_ms / 1000.0;
		if (t < lo || t >= hi)
			continue;
		if ((json_int_t) json_array_size(sums) == limit) {
			/* The last one listed: more follow. */
			json_t *last = json_array_get(sums, limit - 1);
			json_object_set(j, "LastEvaluatedBackupArn",
			    json_object_get(last, "BackupArn"));
			break;
		}
		char tarn[512];
		errors_table_arn(tarn, sizeof(tarn), c->region, b->src.name);
		json_array_append_new(sums, json_pack(
		    "{s:s,s:s,s:s,s:s,s:s,s:f,s:s,s:s,s:I}",
		    "TableName", b->src.name, "TableId", b->src.uuid,
		    "TableArn", tarn, "BackupArn", arn,
		    "BackupName", b->name,
		    "BackupCreationDateTime", t,
		    "BackupStatus", status_name(b->status),
		    "BackupType", "USER",
		    "BackupSizeBytes", (json_int_t) b->size_bytes));
	}
	free_list(l, n);
	json_object_set_new(j, "BackupSummaries", sums);
	api_reply_json(out, j);
}

/* Whether attribute `name` is among t's definitions; adds it if not. */
static bool
keep_def(table *t, const table *src, const char *name)
{
	for (size_t i = 0; i < t->n_attr_defs; i++)
		if (strcmp(t->attr_defs[i].name, name) == 0)
			return true;
	for (size_t i = 0; i < src->n_attr_defs; i++)
		if (strcmp(src->attr_defs[i].name, name) == 0) {
			t->attr_defs[t->n_attr_defs++] = src->attr_defs[i];
			return true;
		}
	return false;
}

/*
 * Reads an override's ProvisionedThroughput (CreateTable's checks) into
 * rcu/wcu, which keep their values when it has a violation. False after
 * answering a member of the wrong type or out of bounds.
 */
static bool
override_throughput(json_t *pt, const char *member, uint64_t *rcu,
    uint64_t *wcu, req_errors *e, reply *out)
{
	json_int_t r, w;
	if (!index_spec_read_throughput(pt, member, e, &r, &w, out) ||
	    !index_spec_throughput_in_bounds(r, w, out))
		return false;
	if (r >= 1 && w >= 1) {
		*rcu = (uint64_t) r;
		*wcu = (uint64_t) w;
	}
	return true;
}

/*
 * Builds the table to create from backup b and the request's overrides:
 * true with *t filled (pointers borrowed from b, arrays in the arena), or
 * false after answering.
 */
static bool
restore_spec(api_ctx *c, json_t *body, const backup_rec *b,
    const char *target, table *t, reply *out)
{
	const table *src = &b->src;
	const char *billing;
	json_t *pt, *gsis, *lsis;
	req_errors e = { 0 };
	if (!req_string(body, "BillingModeOverride", &billing, out) ||
	    !req_object(body, "ProvisionedThroughputOverride", &pt, out) ||
	    !req_array(body, "GlobalSecondaryIndexOverride", &gsis, out) ||
	    !req_array(body, "LocalSecondaryIndexOverride", &lsis, out))
		return false;
	*t = *src;
	t->name = (char *) target;
	t->uuid = (char *) "";
	t->parts = NULL;
	t->n_parts = 0;
	t->tags = NULL;
	t->n_tags = 0;
	t->ttl_attr = NULL;
	t->restore_arn = NULL;
	t->status = 0;
	t->last_increase_ms = t->last_decrease_ms = 0;
	t->decreases_today = 0;
	t->billing_changed_ms = 0;
	if (req_check_billing_mode(&e, billing, "billingModeOverride"))
		t->billing = strcmp(billing, "PROVISIONED") == 0 ?
		    BILLING_PROVISIONED : BILLING_PAY_PER_REQUEST;
	if (pt != NULL && !override_throughput(pt,
	    "provisionedThroughputOverride", &t->rcu, &t->wcu, &e, out))
		return false;
	if (t->billing == BILLING_PAY_PER_REQUEST) {
		if (pt != NULL)
			req_errors_add(&e, "One or more parameter values were "
			    "invalid: Neither ReadCapacityUnits nor "
			    "WriteCapacityUnits can be specified when "
			    "BillingMode is PAY_PER_REQUEST");
		t->rcu = t->wcu = 0;
	} else if (t->rcu == 0 && pt == NULL) {
		req_errors_add(&e, "One or more parameter values were invalid: "
		    "ProvisionedThroughputOverride must be specified when "
		    "BillingModeOverride is PROVISIONED");
	}
	index_def *idx = arena_alloc(c->a,
	    (src->n_indexes + 1) * sizeof(*idx));
	key_def *defs = arena_alloc(c->a,
	    (src->n_attr_defs + 1) * sizeof(*defs));
	if (idx == NULL || defs == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	size_t n_local = 0, kept_local = 0;
	for (size_t i = 0; i < src->n_indexes; i++)
		n_local += src->indexes[i].local;
	if (lsis != NULL) {
		for (size_t k = 0; k < json_array_size(lsis); k++) {
			json_t *x = json_array_get(lsis, k);
			const char *in = json_string_value(
			    json_object_get(x, "IndexName"));
			bool found = false;
			for (size_t i = 0; in != NULL && i < src->n_indexes;
			    i++)
				found |= src->indexes[i].local &&
				    strcmp(src->indexes[i].name, in) == 0;
			if (!found)
				req_errors_add(&e, "One or more parameter values "
				    "were invalid: LocalSecondaryIndexOverride "
				    "names %s, which the backup does not have",
				    in != NULL ? in : "no index");
			kept_local += found;
		}
		if (kept_local != 0 && kept_local != n_local)
			req_errors_add(&e, "One or more parameter values were "
			    "invalid: LocalSecondaryIndexOverride must list "
			    "all of the backup's local secondary indexes, or "
			    "none");
	} else {
		kept_local = n_local;
	}
	t->indexes = idx;
	t->n_indexes = 0;
	t->attr_defs = defs;
	t->n_attr_defs = 0;
	keep_def(t, src, src->hash.name);
	if (src->range.name != NULL)
		keep_def(t, src, src->range.name);
	for (size_t i = 0; i < src->n_indexes; i++) {
		index_def d = src->indexes[i];
		d.table_id = 0;
		if (d.deleting || (d.local && kept_local == 0))
			continue;
		if (!d.local && gsis != NULL) {
			json_t *found = NULL;
			for (size_t k = 0; k < json_array_size(gsis); k++) {
				json_t *x = json_array_get(gsis, k);
				const char *in = json_string_value(
				    json_object_get(x, "IndexName"));
				if (in != NULL && strcmp(in, d.name) == 0)
					found = x;
			}
			if (found == NULL)
				continue;
			json_t *ipt = json_object_get(found,
			    "ProvisionedThroughput");
			if (ipt != NULL && !override_throughput(ipt,
			    "globalSecondaryIndexOverride."
			    "provisionedThroughput", &d.rcu, &d.wcu, &e, out))
				return false;
		}
		if (!d.local && t->billing == BILLING_PAY_PER_REQUEST)
			d.rcu = d.wcu = 0;
		else if (!d.local && d.rcu == 0)
			d.rcu = t->rcu, d.wcu = t->wcu;
		idx[t->n_indexes++] = d;
		const key_def *k[2 * INDEX_KEY_PARTS];
		size_t nk = index_key_all(&d, k, NULL);
		for (size_t j = 0; j < nk; j++)
			keep_def(t, src, k[j]->name);
	}
	for (size_t k = 0; gsis != NULL && k < json_array_size(gsis); k++) {
		const char *in = json_string_value(json_object_get(
		    json_array_get(gsis, k), "IndexName"));
		bool found = false;
		for (size_t i = 0; in != NULL && i < src->n_indexes; i++)
			found |= !src->indexes[i].local &&
			    strcmp(src->indexes[i].name, in) == 0;
		if (!found)
			req_errors_add(&e, "One or more parameter values were "
			    "invalid: GlobalSecondaryIndexOverride names %s, "
			    "which the backup does not have",
			    in != NULL ? in : "no index");
	}
	return !req_errors_reply(&e, out);
}

void
ops_backup_restore(api_ctx *c, json_t *body, reply *out)
{
	const char *target, *arn, *suffix;
	req_errors e = { 0 };
	if (!req_string(body, "TargetTableName", &target, out))
		return;
	req_check_table_name(&e, target, "targetTableName");
	if (req_errors_reply(&e, out) ||
	    !backup_arn_read(body, &arn, &suffix, out))
		return;
	rpc_request req = { .limit = RPC_BACKUP_DESCRIBE,
	    .item = (const uint8_t *) suffix, .item_len = strlen(suffix) };
	backup_rec *l;
	size_t n;
	kv_err code = KV_OK;
	if (!call(c, &req, &l, &n, &code, out)) {
		if (code != KV_OK)
			errors_reply(out, ERR_BACKUP_NOT_FOUND,
			    "Backup not found: %s", arn);
		return;
	}
	table t;
	if (n != 1) {
		free_list(l, n);
		errors_from_kv(out, KV_PROTO);
		return;
	}
	if (l[0].status != BACKUP_AVAILABLE) {
		errors_reply(out, ERR_BACKUP_IN_USE, "Backup is being created: "
		    "%s", arn);
		free_list(l, n);
		return;
	}
	if (!restore_spec(c, body, &l[0], target, &t, out)) {
		free_list(l, n);
		return;
	}
	rpc_request rq = { .limit = RPC_BACKUP_RESTORE_TABLE, .table = &t,
	    .item = (const uint8_t *) suffix, .item_len = strlen(suffix),
	    .op = RPC_BACKUP };
	rpc_response resp;
	kv_err rv = conn_call(c->r, 0, &rq, c->a, &resp);
	free_list(l, n);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	if (resp.code == KV_TABLE_EXISTS) {
		errors_reply(out, ERR_TABLE_EXISTS, "Table already exists: %s",
		    target);
	} else if (resp.code == KV_NO_TABLE) {
		errors_reply(out, ERR_BACKUP_NOT_FOUND, "Backup not found: %s",
		    arn);
	} else if (resp.code == KV_IN_USE) {
		errors_reply(out, ERR_BACKUP_IN_USE, "Backup is being created: "
		    "%s", arn);
	} else if (resp.code == KV_EINVAL && resp.message != NULL) {
		errors_reply(out, ERR_VALIDATION, "%s", resp.message);
	} else {
		ops_table_created(c, &resp, out);
	}
	wire_response_fini(&resp);
}

json_t *
ops_backup_summary(api_ctx *c, const table *t)
{
	char src[512], arn[700];
	const char *cut = strstr(t->restore_arn, "/backup/");
	size_t nl = cut != NULL ? (size_t) (cut - t->restore_arn) :
	    strlen(t->restore_arn);
	char name[300];
	snprintf(name, sizeof(name), "%.*s", (int) nl, t->restore_arn);
	errors_table_arn(src, sizeof(src), c->region, name);
	snprintf(arn, sizeof(arn), "%s%s", src, cut != NULL ? cut : "");
	return json_pack("{s:s,s:s,s:f,s:b}", "SourceBackupArn", arn,
	    "SourceTableArn", src,
	    "RestoreDateTime", (double) t->restore_ms / 1000.0,
	    "RestoreInProgress", t->status == TABLE_CREATING);
}

/* Whether table `name` exists (the route's catalog, refreshed). */
static bool
table_exists(api_ctx *c, const char *name, reply *out)
{
	kv_err rv = route_refresh(c->r);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return false;
	}
	route_read_lock();
	const table *t = catalog_find(route_current(c->r), name,
	    strlen(name));
	bool ok = t != NULL && !table_is_index(t);
	route_read_unlock();
	if (!ok)
		table_not_found(out, name);
	return ok;
}

static void
continuous_reply(reply *out)
{
	api_reply_json(out, json_pack("{s:{s:s,s:{s:s}}}",
	    "ContinuousBackupsDescription",
	    "ContinuousBackupsStatus", "ENABLED",
	    "PointInTimeRecoveryDescription",
	    "PointInTimeRecoveryStatus", "DISABLED"));
}

void
ops_backup_continuous(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	if (ops_table_name(body, &name, out) && table_exists(c, name, out))
		continuous_reply(out);
}

void
ops_backup_continuous_update(api_ctx *c, json_t *body, reply *out)
{
	const char *name;
	json_t *spec;
	bool on = false;
	if (!ops_table_name(body, &name, out) ||
	    !req_object(body, "PointInTimeRecoverySpecification", &spec, out))
		return;
	if (spec == NULL) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value null at 'pointInTimeRecoverySpecification' failed "
		    "to satisfy constraint: Member must not be null");
		return;
	}
	if (!req_bool(spec, "PointInTimeRecoveryEnabled", &on, out))
		return;
	if (json_object_get(spec, "PointInTimeRecoveryEnabled") == NULL) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value null at 'pointInTimeRecoverySpecification."
		    "pointInTimeRecoveryEnabled' failed to satisfy constraint: "
		    "Member must not be null");
		return;
	}
	if (!table_exists(c, name, out))
		return;
	if (on) {
		errors_reply(out, ERR_VALIDATION, "Point-in-time recovery is not "
		    "supported by this cluster (on-demand backups are: "
		    "CreateBackup)");
		return;
	}
	continuous_reply(out);
}
