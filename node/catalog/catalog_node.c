/*
 * catalog_node.c — the catalog node's verbs (CATALOG_GET, CREATE_TABLE,
 * DELETE_TABLE, BUMP_EPOCH, UPDATE_TABLE) and the worker that carries
 * tables through CREATING -> ACTIVE, UPDATING -> ACTIVE (the owners hear
 * the new throughput in a fresh ASSIGN) and DELETING -> gone.
 *
 * Locking rule: catalog_state.mu guards `cat` and the catalog record in the
 * store. A change clones the catalog, edits the clone, writes it (one key,
 * so the change is atomic across a crash), then swaps it in; readers copy
 * what they need while holding mu. The worker talks to other nodes without
 * holding mu.
 *
 * Crash behaviour: a table is recorded as CREATING (or DELETING) before any
 * owner hears of it; after a restart the worker finds it in that state and
 * finishes the job, and it re-sends every ACTIVE table's assignment once,
 * which repairs an owner that missed an epoch change. ASSIGN and
 * DROP_TABLE are idempotent, so resending is safe.
 */
#include "catalog_node.h"
#include "backup.h"
#include "index.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "catalog_int.h"
#include "cluster.h"
#include "feed.h"
#include "index_key.h"
#include "node.h"
#include "thread_name.h"

#define CATALOG_KEY_LEN 5
static const uint8_t catalog_key[CATALOG_KEY_LEN] = { 0, 0, 0, 0, 'C' };
/* The added and drained nodes: two little-endian 64-bit masks. */
static const uint8_t nodes_key[CATALOG_KEY_LEN] = { 0, 0, 0, 0, 'N' };

bool
catalog_node_eligible(node *n, uint32_t i)
{
	if (i >= n->cfg.n_nodes || i >= 64)
		return false;
	uint64_t bit = 1ull << i;
	return !(n->cat->drained_nodes & bit) &&
	    (!n->cfg.nodes[i].standby || (n->cat->added_nodes & bit));
}

bool
catalog_node_running(node *n, uint32_t i)
{
	if (i >= n->cfg.n_nodes || i >= 64)
		return false;
	pthread_mutex_lock(&n->cat->mu);
	bool added = (n->cat->added_nodes & (1ull << i)) != 0;
	pthread_mutex_unlock(&n->cat->mu);
	return !n->cfg.nodes[i].standby || added;
}

kv_err
catalog_nodes_save_locked(node *n)
{
	uint8_t v[16];
	store_batch b;
	bytes_put_le64(v, n->cat->added_nodes);
	bytes_put_le64(v + 8, n->cat->drained_nodes);
	store_batch_init(&b);
	kv_err rv = store_batch_add(&b, STORE_PUT, nodes_key, CATALOG_KEY_LEN,
	    v, sizeof(v));
	if (rv == KV_OK)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	return rv;
}

/*
 * Places t's partitions round-robin on the nodes that take partitions,
 * starting at the table's id. KV_UNAVAILABLE when none does. Needs mu.
 */
static kv_err
place_locked(node *n, table *t)
{
	uint32_t el[CONFIG_MAX_NODES], k = 0;
	for (uint32_t i = 0; i < n->cfg.n_nodes; i++)
		if (catalog_node_eligible(n, i))
			el[k++] = i;
	if (k == 0)
		return KV_UNAVAILABLE;
	for (size_t i = 0; i < t->n_parts; i++)
		t->parts[i].node = el[(t->id + i) % k];
	return KV_OK;
}

kv_err
catalog_publish_locked(node *n, catalog *c, const store_op *extra)
{
	uint8_t *buf;
	size_t len;
	store_batch b;
	kv_err rv;

	c->version = n->cat->cat->version + 1;
	if ((rv = wire_pack_catalog(c, &buf, &len)) != KV_OK)
		return rv;
	store_batch_init(&b);
	rv = store_batch_add(&b, STORE_PUT, catalog_key, CATALOG_KEY_LEN, buf,
	    len);
	if (rv == KV_OK && extra != NULL)
		rv = store_batch_add(&b, extra->kind, extra->key,
		    extra->key_len, extra->val, extra->val_len);
	if (rv == KV_OK)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	free(buf);
	if (rv != KV_OK)
		return rv;
	catalog *old = n->cat->cat, *view;
	n->cat->cat = c;
	if (catalog_clone(c, &view) == KV_OK)
		index_view_install(n, view);
	if (n->cat->pub != NULL)
		feed_pub_change(n->cat->pub, old, c);
	catalog_free(old);
	pthread_cond_broadcast(&n->cat->cv);
	return KV_OK;
}

uint64_t
catalog_node_version(node *n)
{
	pthread_mutex_lock(&n->cat->mu);
	uint64_t v = n->cat->cat->version;
	pthread_mutex_unlock(&n->cat->mu);
	return v;
}

void
catalog_node_fault(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	if (n->cat == NULL || req->table_name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	if (n->cat->pub == NULL) {
		resp->code = KV_UNAVAILABLE;
		resp->message = "this catalog node publishes no feed";
	} else if (strcmp(req->table_name, "drop") == 0) {
		feed_pub_drop(n->cat->pub, req->limit);
		resp->code = KV_OK;
	} else if (strcmp(req->table_name, "disconnect") == 0) {
		resp->code = feed_pub_disconnect(n->cat->pub, req->limit);
	} else {
		resp->code = KV_EINVAL;
		resp->message = "unknown feed fault (drop, disconnect)";
	}
}

table *
catalog_find_mut(catalog *c, const char *name)
{
	return (table *) catalog_find(c, name, strlen(name));
}

static void
make_uuid(char out[37])
{
	uint8_t r[16];
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t) sizeof(r)) {
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (uint8_t) rand();
	}
	if (fd >= 0)
		close(fd);
	r[6] = (r[6] & 0x0f) | 0x40;
	r[8] = (r[8] & 0x3f) | 0x80;
	snprintf(out, 37,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x",
	    r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
	    r[11], r[12], r[13], r[14], r[15]);
}

int64_t
catalog_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

kv_err
catalog_copy_out(const table *t, rpc_response *resp)
{
	table *copy = malloc(sizeof(*copy));
	if (copy == NULL)
		return KV_ENOMEM;
	kv_err rv = table_copy(t, copy);
	if (rv != KV_OK) {
		free(copy);
		return rv;
	}
	resp->table = copy;
	return KV_OK;
}

void
catalog_node_get(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	if (n->cat == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&n->cat->mu);
	resp->code = catalog_clone(n->cat->cat, &resp->cat);
	pthread_mutex_unlock(&n->cat->mu);
}

void
catalog_answer_publish_locked(node *n, catalog **c, const table *t,
    rpc_response *resp)
{
	if ((resp->code = catalog_copy_out(t, resp)) == KV_OK &&
	    (resp->code = catalog_publish_locked(n, *c, NULL)) == KV_OK)
		*c = NULL;
}

/*
 * Inserts an owned copy of src into c, keeping the tables sorted by name
 * for catalog_find; its position in *at. KV_TABLE_EXISTS when c holds
 * the name, KV_ENOMEM.
 */
static kv_err
insert_table(catalog *c, const table *src, size_t *at)
{
	size_t i = 0;
	if (catalog_find_mut(c, src->name) != NULL)
		return KV_TABLE_EXISTS;
	table *grown = realloc(c->tables, (c->n_tables + 1) * sizeof(table));
	if (grown == NULL)
		return KV_ENOMEM;
	c->tables = grown;
	while (i < c->n_tables && strcmp(c->tables[i].name, src->name) < 0)
		i++;
	memmove(&c->tables[i + 1], &c->tables[i],
	    (c->n_tables - i) * sizeof(table));
	kv_err rv = table_copy(src, &c->tables[i]);
	if (rv != KV_OK) {
		memmove(&c->tables[i], &c->tables[i + 1],
		    (c->n_tables - i) * sizeof(table));
		return rv;
	}
	c->n_tables++;
	*at = i;
	return KV_OK;
}

/*
 * Fills a new table's catalog fields: id, uuid, CREATING, creation time,
 * and partitions placed on the nodes. Needs mu.
 */
static kv_err
new_table_locked(node *n, catalog *c, table *t)
{
	char uuid[37];
	make_uuid(uuid);
	if (c->next_table_id == 0)
		c->next_table_id = 1;
	t->id = c->next_table_id++;
	free(t->uuid);
	if ((t->uuid = strdup(uuid)) == NULL)
		return KV_ENOMEM;
	t->status = TABLE_CREATING;
	t->created_ms = catalog_now_ms();
	kv_err rv = table_split_even(t, n->cfg.partitions,
	    t->id % (uint32_t) n->cfg.n_nodes, (uint32_t) n->cfg.n_nodes);
	return rv != KV_OK ? rv : place_locked(n, t);
}

/*
 * Adds the table of base's global index d to c, created with base, and
 * sets d->table_id. Needs mu.
 */
static kv_err
add_index_table_locked(node *n, catalog *c, const table *base,
    index_def *d)
{
	table it;
	key_def defs[2];
	size_t at, nl = strlen(base->name) + 1 + strlen(d->name) + 1;
	char *name = malloc(nl);
	if (name == NULL)
		return KV_ENOMEM;
	snprintf(name, nl, "%s/%s", base->name, d->name);
	memset(&it, 0, sizeof(it));
	it.name = name;
	it.uuid = (char *) "";
	it.hash = d->hash;
	it.range = d->range;
	/* A multi-attribute key is one Binary value (core/index_key.h). */
	if (index_key_multi(d, false))
		it.hash.type = VAL_B;
	if (index_key_multi(d, true))
		it.range.type = VAL_B;
	defs[0] = it.hash;
	defs[1] = it.range;
	it.attr_defs = defs;
	it.n_attr_defs = d->range.name != NULL ? 2 : 1;
	it.billing = base->billing;
	it.rcu = d->rcu;
	it.wcu = d->wcu;
	it.base_id = base->id;
	kv_err rv = insert_table(c, &it, &at);
	free(name);
	if (rv != KV_OK)
		return rv;
	if ((rv = new_table_locked(n, c, &c->tables[at])) == KV_OK)
		d->table_id = c->tables[at].id;
	return rv;
}

kv_err
catalog_insert_locked(node *n, catalog *c, const table *want)
{
	size_t at;
	kv_err rv;
	if ((rv = insert_table(c, want, &at)) != KV_OK ||
	    (rv = new_table_locked(n, c, &c->tables[at])) != KV_OK)
		return rv;
	/*
	 * Each global index gets a table of its own, created with the base
	 * table; inserting one moves the tables, so the base is looked up
	 * by name again each time.
	 */
	for (size_t i = 0; i < want->n_indexes; i++) {
		table *t = catalog_find_mut(c, want->name);
		if (t->indexes[i].local)
			continue;
		index_def d = t->indexes[i];
		if ((rv = add_index_table_locked(n, c, t, &d)) != KV_OK)
			return rv;
		catalog_find_mut(c, want->name)->indexes[i].table_id =
		    d.table_id;
	}
	return KV_OK;
}

void
catalog_node_create(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	const table *want = req->table;
	catalog *c = NULL;

	if (n->cat == NULL || want == NULL || want->name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&n->cat->mu);
	if ((resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK ||
	    (resp->code = catalog_insert_locked(n, c, want)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, want->name);
	catalog_answer_publish_locked(n, &c, t, resp);
out:
	pthread_mutex_unlock(&n->cat->mu);
	catalog_free(c);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

static const char *
in_use_name(table_status s)
{
	switch (s) {
	case TABLE_CREATING: return "CREATING";
	case TABLE_UPDATING: return "UPDATING";
	default: return "DELETING";
	}
}

/*
 * The ACTIVE table `name` of the current catalog, or NULL after setting
 * resp->code: KV_NO_TABLE, or KV_IN_USE with its status as the message
 * (a table being created, updated or deleted takes no other change).
 * Needs mu.
 */
static const table *
find_active_locked(node *n, const char *name, rpc_response *resp)
{
	const table *t = catalog_find_mut(n->cat->cat, name);
	if (t == NULL) {
		resp->code = KV_NO_TABLE;
		return NULL;
	}
	if (t->status != TABLE_ACTIVE) {
		resp->code = KV_IN_USE;
		resp->message = in_use_name(t->status);
		return NULL;
	}
	return t;
}

void
catalog_node_delete(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	catalog *c = NULL;

	if (n->cat == NULL || req->table_name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&n->cat->mu);
	if (find_active_locked(n, req->table_name, resp) == NULL ||
	    (resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, req->table_name);
	t->status = TABLE_DELETING;
	/* Its global indexes go with it, in the same change. */
	for (size_t i = 0; i < c->n_tables; i++)
		if (c->tables[i].base_id == t->id)
			c->tables[i].status = TABLE_DELETING;
	catalog_answer_publish_locked(n, &c, t, resp);
out:
	pthread_mutex_unlock(&n->cat->mu);
	catalog_free(c);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

/* After 4 decreases in a UTC day, one more an hour (DynamoDB's quota). */
#define FREE_DECREASES 4
#define DECREASE_SPACING_MS (3600 * 1000LL)
#define DAY_MS (86400 * 1000LL)

void
catalog_node_update(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	const table *want = req->table;
	catalog *c = NULL;
	char msg[512];

	if (n->cat == NULL || want == NULL || want->name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&n->cat->mu);
	const table *cur = find_active_locked(n, want->name, resp);
	if (cur == NULL)
		goto out;
	bool to_prov = want->billing == BILLING_PROVISIONED;
	int64_t now = catalog_now_ms();
	if (to_prov && cur->billing == BILLING_PROVISIONED &&
	    want->rcu == cur->rcu && want->wcu == cur->wcu) {
		snprintf(msg, sizeof(msg), "The provisioned throughput for the "
		    "table will not change. The requested value equals the "
		    "current value. Current ReadCapacityUnits provisioned for "
		    "the table: %llu. Requested ReadCapacityUnits: %llu. "
		    "Current WriteCapacityUnits provisioned for the table: "
		    "%llu. Requested WriteCapacityUnits: %llu. Refer to the "
		    "Amazon DynamoDB Developer Guide for current limits and "
		    "how to request higher limits.",
		    (unsigned long long) cur->rcu,
		    (unsigned long long) want->rcu,
		    (unsigned long long) cur->wcu,
		    (unsigned long long) want->wcu);
		resp->code = KV_EINVAL;
		resp->message = arena_dup(a, msg, strlen(msg));
		goto out;
	}
	bool same_day = cur->decreases_day == now / DAY_MS;
	uint32_t today = same_day ? cur->decreases_today : 0;
	bool decrease = to_prov && cur->billing == BILLING_PROVISIONED &&
	    (want->rcu < cur->rcu || want->wcu < cur->wcu);
	bool increase = to_prov && (cur->billing != BILLING_PROVISIONED ||
	    want->rcu > cur->rcu || want->wcu > cur->wcu);
	if (decrease && today >= FREE_DECREASES &&
	    now - cur->last_decrease_ms < DECREASE_SPACING_MS) {
		/* KV_BUSY with a message: the router's LimitExceeded. */
		snprintf(msg, sizeof(msg), "Subscriber limit exceeded: "
		    "Provisioned throughput decreases are limited within a "
		    "given UTC day. After the first %d decreases, each "
		    "subsequent decrease in the same UTC day can be performed "
		    "at most once every 3600 seconds. Number of decreases "
		    "today: %u.", FREE_DECREASES, today);
		resp->code = KV_BUSY;
		resp->message = arena_dup(a, msg, strlen(msg));
		goto out;
	}
	if ((resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, want->name);
	if (t->billing != want->billing)
		t->billing_changed_ms = now;
	t->billing = want->billing;
	t->rcu = to_prov ? want->rcu : 0;
	t->wcu = to_prov ? want->wcu : 0;
	if (increase)
		t->last_increase_ms = now;
	if (decrease) {
		t->last_decrease_ms = now;
		t->decreases_day = now / DAY_MS;
		t->decreases_today = today + 1;
	}
	t->status = TABLE_UPDATING;
	/*
	 * The global indexes follow the table's billing mode: on demand,
	 * they lose their units; provisioned, they take the units the
	 * router sent for each of them just before (RPC_INDEX_THROUGHPUT).
	 */
	for (size_t i = 0; i < c->n_tables; i++) {
		table *it = &c->tables[i];
		if (it->base_id != t->id || it->billing == want->billing)
			continue;
		it->billing = want->billing;
		if (!to_prov)
			it->rcu = it->wcu = 0;
		it->billing_changed_ms = now;
		if (it->status == TABLE_ACTIVE)
			it->status = TABLE_UPDATING;
	}
	catalog_answer_publish_locked(n, &c, t, resp);
out:
	pthread_mutex_unlock(&n->cat->mu);
	catalog_free(c);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

/* The index of t named name, or NULL. */
static index_def *
index_named(table *t, const char *name)
{
	for (size_t i = 0; i < t->n_indexes; i++)
		if (strcmp(t->indexes[i].name, name) == 0)
			return &t->indexes[i];
	return NULL;
}

/* Adds to t the definitions of defs[0..n) it lacks. Needs mu. */
static kv_err
add_defs(table *t, const key_def *defs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool have = false;
		for (size_t k = 0; k < t->n_attr_defs; k++)
			have |= strcmp(t->attr_defs[k].name, defs[i].name) == 0;
		if (have)
			continue;
		key_def *g = realloc(t->attr_defs, (t->n_attr_defs + 1) *
		    sizeof(key_def));
		if (g == NULL)
			return KV_ENOMEM;
		t->attr_defs = g;
		if ((g[t->n_attr_defs].name = strdup(defs[i].name)) == NULL)
			return KV_ENOMEM;
		g[t->n_attr_defs++].type = defs[i].type;
	}
	return KV_OK;
}

/*
 * A change of one table's catalog entry: check (on the entry as it is;
 * NULL: none) and apply (on a copy), each KV_OK or an error with
 * resp->message set. The frame every such change shares: under the
 * catalog's mutex, the table found (ACTIVE when `active`, else any status
 * but DELETING), the catalog cloned, the change published and answered.
 */
typedef kv_err (*table_edit)(const table *want, const table *cur,
    table *t, rpc_response *resp);

static void
edit_table(node *n, const rpc_request *req, bool active, table_edit check,
    table_edit apply, rpc_response *resp)
{
	const table *want = req->table;
	catalog *c = NULL;

	if (n->cat == NULL || want == NULL || want->name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&n->cat->mu);
	const table *cur = active ? find_active_locked(n, want->name, resp) :
	    catalog_find_mut(n->cat->cat, want->name);
	if (cur == NULL || cur->status == TABLE_DELETING) {
		if (cur != NULL || !active)
			resp->code = KV_NO_TABLE;
		goto out;
	}
	if ((check != NULL &&
	    (resp->code = check(want, cur, NULL, resp)) != KV_OK) ||
	    (resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, want->name);
	if ((resp->code = apply(want, cur, t, resp)) != KV_OK)
		goto out;
	catalog_answer_publish_locked(n, &c, t, resp);
out:
	pthread_mutex_unlock(&n->cat->mu);
	catalog_free(c);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

static kv_err
ttl_check(const table *want, const table *cur, table *t,
    rpc_response *resp)
{
	(void) t;
	if ((want->ttl_attr != NULL) != (cur->ttl_attr != NULL))
		return KV_OK;
	resp->message = want->ttl_attr != NULL ?
	    "TimeToLive is already enabled" : "TimeToLive is already disabled";
	return KV_EINVAL;
}

static kv_err
ttl_apply(const table *want, const table *cur, table *t,
    rpc_response *resp)
{
	(void) cur;
	(void) resp;
	free(t->ttl_attr);
	t->ttl_attr = NULL;
	if (want->ttl_attr != NULL &&
	    (t->ttl_attr = strdup(want->ttl_attr)) == NULL)
		return KV_ENOMEM;
	return KV_OK;
}

void
catalog_node_ttl(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	(void) a;
	edit_table(n, req, true, ttl_check, ttl_apply, resp);
}

/* The position of key among t's tags, or t->n_tags. */
static size_t
tag_at(const table *t, const char *key)
{
	size_t i = 0;
	while (i < t->n_tags && strcmp(t->tags[i].key, key) != 0)
		i++;
	return i;
}

/* Setting want's tags on cur would keep it within TABLE_MAX_TAGS. */
static kv_err
tags_check(const table *want, const table *cur, table *t,
    rpc_response *resp)
{
	(void) t;
	size_t total = cur->n_tags;
	for (size_t i = 0; i < want->n_tags; i++)
		if (tag_at(cur, want->tags[i].key) == cur->n_tags)
			total++;
	if (total <= TABLE_MAX_TAGS)
		return KV_OK;
	resp->message = "One or more parameter values were invalid: The "
	    "number of tags on the resource would exceed the limit of 50";
	return KV_EINVAL;
}

static kv_err
tags_set(const table *want, const table *cur, table *t, rpc_response *resp)
{
	(void) cur;
	(void) resp;
	for (size_t i = 0; i < want->n_tags; i++) {
		size_t at = tag_at(t, want->tags[i].key);
		char *v = strdup(want->tags[i].value);
		if (v == NULL)
			return KV_ENOMEM;
		if (at < t->n_tags) {
			free(t->tags[at].value);
			t->tags[at].value = v;
			continue;
		}
		table_tag *g = realloc(t->tags, (t->n_tags + 1) * sizeof(*g));
		char *k = strdup(want->tags[i].key);
		if (g != NULL)
			t->tags = g;
		if (g == NULL || k == NULL) {
			free(v);
			free(k);
			return KV_ENOMEM;
		}
		t->tags[t->n_tags++] = (table_tag) { k, v };
	}
	return KV_OK;
}

static kv_err
tags_remove(const table *want, const table *cur, table *t,
    rpc_response *resp)
{
	(void) cur;
	(void) resp;
	for (size_t i = 0; i < want->n_tags; i++) {
		size_t at = tag_at(t, want->tags[i].key);
		if (at == t->n_tags)
			continue;
		free(t->tags[at].key);
		free(t->tags[at].value);
		memmove(&t->tags[at], &t->tags[at + 1],
		    (t->n_tags - at - 1) * sizeof(table_tag));
		t->n_tags--;
	}
	return KV_OK;
}

void
catalog_node_tags(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	(void) a;
	if (req->limit == RPC_TAGS_SET)
		edit_table(n, req, false, tags_check, tags_set, resp);
	else if (req->limit == RPC_TAGS_REMOVE)
		edit_table(n, req, false, NULL, tags_remove, resp);
	else
		resp->code = KV_PROTO;
}

void
catalog_node_index(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	const table *want = req->table;
	catalog *c = NULL;

	if (n->cat == NULL || want == NULL || want->name == NULL ||
	    want->n_indexes != 1) {
		resp->code = KV_PROTO;
		return;
	}
	const index_def *d = &want->indexes[0];
	pthread_mutex_lock(&n->cat->mu);
	const table *cur = find_active_locked(n, want->name, resp);
	if (cur == NULL ||
	    (resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, want->name);
	index_def *have = index_named(t, d->name);
	if (req->limit == RPC_INDEX_CREATE && have != NULL) {
		resp->code = KV_EINVAL;
		resp->message = "One or more parameter values were invalid: "
		    "Index already exists";
		goto out;
	}
	if (req->limit != RPC_INDEX_CREATE &&
	    (have == NULL || have->local)) {
		resp->code = KV_NO_TABLE;
		resp->message = "index";
		goto out;
	}
	if (req->limit == RPC_INDEX_CREATE || req->limit == RPC_INDEX_DELETE) {
		/* One index created or deleted at a time. */
		for (size_t i = 0; i < c->n_tables; i++) {
			const table *it = &c->tables[i];
			if (it->base_id == t->id && (it->backfilling ||
			    it->status == TABLE_CREATING ||
			    it->status == TABLE_DELETING)) {
				resp->code = KV_BUSY;
				resp->message = "Subscriber limit exceeded: Only 1 "
				    "online index can be created or deleted "
				    "simultaneously per table";
				goto out;
			}
		}
	}
	uint32_t base_id = t->id;
	switch (req->limit) {
	case RPC_INDEX_CREATE: {
		index_def *g = realloc(t->indexes, (t->n_indexes + 1) *
		    sizeof(index_def));
		if (g == NULL) {
			resp->code = KV_ENOMEM;
			goto out;
		}
		t->indexes = g;
		if ((resp->code = index_def_copy(d, &g[t->n_indexes])) !=
		    KV_OK)
			goto out;
		t->n_indexes++;
		g[t->n_indexes - 1].local = false;
		if ((resp->code = add_defs(t, want->attr_defs,
		    want->n_attr_defs)) != KV_OK)
			goto out;
		index_def nd = g[t->n_indexes - 1];
		if ((resp->code = add_index_table_locked(n, c, t, &nd)) != KV_OK)
			goto out;
		t = catalog_find_mut(c, want->name); /* the tables moved */
		t->indexes[t->n_indexes - 1].table_id = nd.table_id;
		table *it = (table *) table_find_id(c, nd.table_id);
		it->backfilling = true;
		break;
	}
	case RPC_INDEX_DELETE: {
		/* The definition stays, marked, until the worker has
		 * dropped the index's table (advance_locked). */
		have->deleting = true;
		table *it = (table *) table_find_id(c, have->table_id);
		if (it != NULL)
			it->status = TABLE_DELETING;
		break;
	}
	case RPC_INDEX_PAUSE:
	case RPC_INDEX_RESUME: {
		table *it = (table *) table_find_id(c, have->table_id);
		if (it == NULL) {
			resp->code = KV_NO_TABLE;
			resp->message = "index";
			goto out;
		}
		it->paused = req->limit == RPC_INDEX_PAUSE;
		break;
	}
	case RPC_INDEX_THROUGHPUT: {
		table *it = (table *) table_find_id(c, have->table_id);
		if (it == NULL || it->status != TABLE_ACTIVE) {
			resp->code = KV_IN_USE;
			resp->message = "UPDATING";
			goto out;
		}
		it->rcu = d->rcu;
		it->wcu = d->wcu;
		/* Units are given ahead of a switch to PROVISIONED too. */
		if (d->rcu > 0 || d->wcu > 0)
			it->billing = BILLING_PROVISIONED;
		it->last_increase_ms = catalog_now_ms();
		it->status = TABLE_UPDATING;
		break;
	}
	default:
		resp->code = KV_PROTO;
		goto out;
	}
	t = (table *) table_find_id(c, base_id);
	catalog_answer_publish_locked(n, &c, t, resp);
out:
	pthread_mutex_unlock(&n->cat->mu);
	catalog_free(c);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

void
catalog_resend_add_locked(catalog_state *cs, uint32_t id)
{
	for (size_t i = 0; i < cs->n_resend; i++)
		if (cs->resend[i] == id)
			return;
	uint32_t *r = realloc(cs->resend, (cs->n_resend + 1) * sizeof(*r));
	if (r == NULL)
		return; /* the periodic full resend will catch it */
	cs->resend = r;
	cs->resend[cs->n_resend++] = id;
}

void
catalog_node_bump(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	catalog *c = NULL;

	if (n->cat == NULL || req->table_name == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&n->cat->mu);
	if (catalog_find_mut(n->cat->cat, req->table_name) == NULL) {
		resp->code = KV_NO_TABLE;
		goto out;
	}
	if ((resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, req->table_name);
	resp->code = KV_EINVAL;
	for (size_t i = 0; i < t->n_parts; i++) {
		if (t->parts[i].id == req->part) {
			t->parts[i].epoch++;
			resp->code = KV_OK;
		}
	}
	if (resp->code != KV_OK)
		goto out;
	if ((resp->code = catalog_copy_out(t, resp)) != KV_OK)
		goto out;
	uint32_t id = t->id;
	if ((resp->code = catalog_publish_locked(n, c, NULL)) == KV_OK) {
		c = NULL;
		catalog_resend_add_locked(n->cat, id);
	}
out:
	pthread_mutex_unlock(&n->cat->mu);
	catalog_free(c);
	if (resp->code != KV_OK)
		wire_response_fini(resp);
}

kv_err
catalog_tell(node *n, uint32_t i, rpc_op op, const table *t,
    uint64_t version)
{
	rpc_request req = {
		.op = op, .table = t, .table_id = t->id, .node = i,
		.min_version = version,
	};
	rpc_response resp;
	arena a;
	kv_err rv;

	arena_init(&a);
	/* Over the node-to-node seam (both verbs are idempotent). */
	rv = cluster_ask(n, i, &req, &a, &resp, RPC_DEFAULT_TIMEOUT_MS);
	wire_response_fini(&resp);
	arena_fini(&a);
	if (rv != KV_OK)
		fprintf(stderr, "kv-node %u: %s of table %s to node %u failed: "
		    "%s (the catalog worker retries)\n", n->index,
		    op == RPC_ASSIGN ? "assignment" : "drop", t->name, i,
		    kv_err_name(rv));
	return rv;
}

/* Tells every owner of t its partitions. */
static kv_err
assign_all(node *n, const table *t, uint64_t version)
{
	for (uint32_t i = 0; i < n->cfg.n_nodes; i++) {
		bool owns = false;
		for (size_t p = 0; p < t->n_parts; p++)
			owns |= t->parts[p].node == i;
		if (!owns)
			continue;
		kv_err rv = catalog_tell(n, i, RPC_ASSIGN, t, version);
		if (rv != KV_OK)
			return rv;
	}
	return KV_OK;
}

static kv_err
drop_all(node *n, const table *t)
{
	for (uint32_t i = 0; i < n->cfg.n_nodes; i++) {
		kv_err rv = catalog_tell(n, i, RPC_DROP_TABLE, t, 0);
		if (rv != KV_OK)
			return rv;
	}
	return KV_OK;
}

/* Moves table `id` on after its owners acted. Needs mu. */
static kv_err
advance_locked(node *n, uint32_t id, table_status from)
{
	catalog *c;
	kv_err rv = catalog_clone(n->cat->cat, &c);
	if (rv != KV_OK)
		return rv;
	for (size_t i = 0; i < c->n_tables; i++) {
		table *t = &c->tables[i];
		if (t->id != id || t->status != from)
			continue;
		if (from == TABLE_CREATING || from == TABLE_UPDATING) {
			t->status = TABLE_ACTIVE;
		} else {
			/* A dropped GSI's definition leaves its base table. */
			table *base = t->base_id != 0 ? (table *)
			    table_find_id(c, t->base_id) : NULL;
			for (size_t k = 0; base != NULL && k < base->n_indexes;
			    k++) {
				if (base->indexes[k].table_id != id)
					continue;
				index_def_fini(&base->indexes[k]);
				memmove(&base->indexes[k], &base->indexes[k + 1],
				    (base->n_indexes - k - 1) *
				    sizeof(index_def));
				base->n_indexes--;
				break;
			}
			t = &c->tables[i]; /* unchanged: no table moved */
			table_fini(t);
			memmove(t, t + 1,
			    (c->n_tables - i - 1) * sizeof(table));
			c->n_tables--;
		}
		break;
	}
	rv = catalog_publish_locked(n, c, NULL);
	if (rv != KV_OK)
		catalog_free(c);
	return rv;
}

/*
 * One step of filling index table it (ACTIVE, backfilling) of snapshot
 * snap: asks every owner of the base table's partitions to fill what it
 * has not (index.h); once all answer that they have, clears
 * backfilling. KV_OK when done, KV_BUSY while not yet, or a failure.
 */
static kv_err
backfill_step(node *n, const catalog *snap, const table *it)
{
	const table *base = table_find_id(snap, it->base_id);
	bool all = true;
	if (base == NULL)
		return KV_OK; /* going with its base table */
	if (base->status == TABLE_CREATING)
		return KV_BUSY; /* a restore is filling it (backup.h) */
	for (uint32_t i = 0; i < n->cfg.n_nodes; i++) {
		bool owns = false;
		for (size_t p = 0; p < base->n_parts; p++)
			owns |= base->parts[p].node == i;
		if (!owns)
			continue;
		rpc_request req = { .op = RPC_INDEX_BACKFILL,
		    .table_id = base->id, .part = it->id };
		rpc_response resp;
		arena a;
		kv_err rv;
		bool done;
		arena_init(&a);
		rv = cluster_ask(n, i, &req, &a, &resp,
		    RPC_DEFAULT_TIMEOUT_MS);
		done = resp.found;
		wire_response_fini(&resp);
		arena_fini(&a);
		if (rv != KV_OK && rv != KV_BUSY)
			return rv;
		all = all && rv == KV_OK && done;
	}
	if (!all)
		return KV_BUSY;
	pthread_mutex_lock(&n->cat->mu);
	catalog *c;
	kv_err rv = catalog_clone(n->cat->cat, &c);
	if (rv == KV_OK) {
		table *cur = (table *) table_find_id(c, it->id);
		if (cur != NULL && cur->backfilling) {
			cur->backfilling = false;
			rv = catalog_publish_locked(n, c, NULL);
			if (rv == KV_OK)
				c = NULL;
		}
		catalog_free(c);
	}
	pthread_mutex_unlock(&n->cat->mu);
	if (rv == KV_OK)
		fprintf(stderr, "kv-node %u: index %s filled\n", n->index,
		    it->name);
	return rv;
}

/*
 * One pass of the worker: act on every table that needs it. Returns true
 * when something failed and the pass should be retried soon.
 */
static bool
work_once(node *n, bool resend_all)
{
	catalog *snap;
	bool failed = false;

	pthread_mutex_lock(&n->cat->mu);
	kv_err rv = catalog_clone(n->cat->cat, &snap);
	uint32_t *resend = n->cat->resend;
	size_t n_resend = n->cat->n_resend;
	n->cat->resend = NULL;
	n->cat->n_resend = 0;
	pthread_mutex_unlock(&n->cat->mu);
	if (rv != KV_OK) {
		free(resend);
		return true;
	}
	for (size_t i = 0; i < snap->n_tables; i++) {
		const table *t = &snap->tables[i];
		bool again = resend_all;
		for (size_t r = 0; r < n_resend; r++)
			again |= resend[r] == t->id;
		if (t->status == TABLE_CREATING ||
		    t->status == TABLE_UPDATING ||
		    (t->status == TABLE_ACTIVE && again)) {
			rv = assign_all(n, t, snap->version);
			if (rv == KV_OK && t->status == TABLE_CREATING &&
			    t->restore_arn != NULL)
				rv = catalog_backup_restore(n, t);
			if (rv == KV_OK && t->status != TABLE_ACTIVE) {
				pthread_mutex_lock(&n->cat->mu);
				rv = advance_locked(n, t->id, t->status);
				pthread_mutex_unlock(&n->cat->mu);
			}
		} else if (t->status == TABLE_ACTIVE && t->backfilling) {
			rv = backfill_step(n, snap, t);
			if (rv == KV_BUSY) {
				failed = true; /* not yet: ask again soon */
				continue;
			}
		} else if (t->status == TABLE_DELETING) {
			rv = drop_all(n, t);
			if (rv == KV_OK) {
				pthread_mutex_lock(&n->cat->mu);
				rv = advance_locked(n, t->id, TABLE_DELETING);
				pthread_mutex_unlock(&n->cat->mu);
			}
		} else {
			continue;
		}
		if (rv != KV_OK) {
			failed = true;
			if (t->status == TABLE_ACTIVE) {
				pthread_mutex_lock(&n->cat->mu);
				catalog_resend_add_locked(n->cat, t->id);
				pthread_mutex_unlock(&n->cat->mu);
			}
		}
	}
	free(resend);
	catalog_free(snap);
	return catalog_backup_work(n) || failed;
}

static bool
pending_locked(catalog_state *cs)
{
	if (cs->n_resend > 0 || cs->backups_due)
		return true;
	for (size_t i = 0; i < cs->cat->n_tables; i++)
		if (cs->cat->tables[i].status != TABLE_ACTIVE ||
		    cs->cat->tables[i].backfilling)
			return true;
	return false;
}

static void *
worker(void *arg)
{
	node *n = arg;
	thread_name("kv-catalog");
	reshape_recover(n); /* a move the last run left half done */
	bool failed = work_once(n, true);
	bool resend_all = failed;

	pthread_mutex_lock(&n->cat->mu);
	while (!n->cat->stop) {
		if (!failed && !pending_locked(n->cat)) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&n->cat->cv, &n->cat->mu, &ts);
			continue;
		}
		pthread_mutex_unlock(&n->cat->mu);
		if (failed)
			usleep(100 * 1000);
		failed = work_once(n, resend_all);
		resend_all = resend_all && failed;
		pthread_mutex_lock(&n->cat->mu);
	}
	pthread_mutex_unlock(&n->cat->mu);
	return NULL;
}

kv_err
catalog_node_open(node *n)
{
	catalog_state *cs = calloc(1, sizeof(*cs));
	uint8_t *buf = NULL;
	size_t len = 0;
	bool found = false;
	kv_err rv;

	if (cs == NULL)
		return KV_ENOMEM;
	pthread_mutex_init(&cs->mu, NULL);
	pthread_cond_init(&cs->cv, NULL);
	pthread_mutex_init(&cs->move_serial, NULL);
	rv = store_get(n->st, catalog_key, CATALOG_KEY_LEN, &buf, &len,
	    &found);
	if (rv == KV_OK && found)
		rv = wire_unpack_catalog(buf, len, &cs->cat);
	else if (rv == KV_OK) {
		cs->cat = calloc(1, sizeof(*cs->cat));
		if (cs->cat == NULL)
			rv = KV_ENOMEM;
		else
			cs->cat->next_table_id = 1;
	}
	free(buf);
	buf = NULL;
	if (rv == KV_OK && (rv = store_get(n->st, nodes_key, CATALOG_KEY_LEN,
	    &buf, &len, &found)) == KV_OK && found && len == 16) {
		cs->added_nodes = bytes_get_le64(buf);
		cs->drained_nodes = bytes_get_le64(buf + 8);
	}
	free(buf);
	if (rv != KV_OK) {
		catalog_free(cs->cat);
		free(cs);
		return rv;
	}
	char url[300];
	if (n->cfg.nodes[0].bus[0] != '\0' &&
	    ((rv = config_bus_url(n->cfg.nodes[0].bus, CONFIG_BUS_FEED, url,
	    sizeof(url))) != KV_OK ||
	    (rv = feed_pub_open(url, cs->cat->version, &cs->pub)) != KV_OK)) {
		catalog_free(cs->cat);
		free(cs);
		return rv;
	}
	n->cat = cs;
	if ((rv = catalog_backup_open(n)) != KV_OK) {
		n->cat = NULL;
		feed_pub_close(cs->pub);
		catalog_free(cs->cat);
		free(cs);
		return rv;
	}
	catalog *view;
	if (catalog_clone(cs->cat, &view) == KV_OK)
		index_view_install(n, view);
	if (reshape_start(n) != KV_OK) {
		n->cat = NULL;
		feed_pub_close(cs->pub);
		catalog_free(cs->cat);
		free(cs);
		return KV_ENOMEM;
	}
	if (pthread_create(&cs->worker, NULL, worker, n) != 0) {
		reshape_stop(n);
		n->cat = NULL;
		feed_pub_close(cs->pub);
		catalog_free(cs->cat);
		free(cs);
		return KV_ENOMEM;
	}
	return KV_OK;
}

void
catalog_node_close(node *n)
{
	catalog_state *cs = n->cat;
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->stop = true;
	pthread_cond_broadcast(&cs->cv);
	pthread_mutex_unlock(&cs->mu);
	pthread_join(cs->worker, NULL);
	reshape_stop(n);
	feed_pub_close(cs->pub);
	catalog_backup_close(n);
	catalog_free(cs->cat);
	free(cs->resend);
	free(cs->prev);
	reshape_fini(cs);
	pthread_mutex_destroy(&cs->move_serial);
	pthread_mutex_destroy(&cs->mu);
	pthread_cond_destroy(&cs->cv);
	free(cs);
	n->cat = NULL;
}
