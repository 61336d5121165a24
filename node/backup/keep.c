/*
 * keep.c — the catalog node's side of backups (backup.h): the records,
 * the RPC_BACKUP verb, and the worker's steps that take, restore and drop
 * the copies on the owners.
 *
 * Locking rule: the records (catalog_state.backups, n_backups,
 * backups_due) and their keys in the store are guarded by the catalog's
 * mu, like the catalog; the worker talks to the owners without it.
 *
 * Crash behaviour: a record is written before any owner is asked to act
 * and changed only after they all have, so a catalog node that restarts
 * finds each backup CREATING (taken again from the start), AVAILABLE, or
 * DELETED (its copies dropped again, which is idempotent), and a restored
 * table CREATING (filled again by the worker, catalog_node.c).
 */
#include "backup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "catalog_int.h"
#include "move.h"
#include "node.h"
#include "store.h"

#define RECORD_KEY_LEN 13
/* A copy of a large partition takes a while; the owner answers once it
 * is durable. */
#define BACKUP_STEP_MS 120000

static void
record_key(uint64_t id, uint8_t k[RECORD_KEY_LEN])
{
	memset(k, 0, 4);
	k[4] = 'D';
	bytes_put_be64(k + 5, id);
}

/* Writes b's record durably. Needs mu. */
static kv_err
save_locked(node *n, const backup_rec *b)
{
	uint8_t k[RECORD_KEY_LEN], *v;
	size_t vl;
	store_batch sb;
	record_key(b->id, k);
	kv_err rv = wire_pack_backup(b, &v, &vl);
	if (rv != KV_OK)
		return rv;
	store_batch_init(&sb);
	if ((rv = store_batch_add(&sb, STORE_PUT, k, sizeof(k), v, vl)) ==
	    KV_OK)
		rv = store_write(n->st, &sb);
	store_batch_fini(&sb);
	free(v);
	return rv;
}

/* Removes record i, durably. Needs mu. */
static kv_err
forget_locked(node *n, size_t i)
{
	catalog_state *cs = n->cat;
	uint8_t k[RECORD_KEY_LEN];
	store_batch sb;
	record_key(cs->backups[i].id, k);
	store_batch_init(&sb);
	kv_err rv = store_batch_add(&sb, STORE_DELETE, k, sizeof(k), NULL, 0);
	if (rv == KV_OK)
		rv = store_write(n->st, &sb);
	store_batch_fini(&sb);
	if (rv != KV_OK)
		return rv;
	backup_rec_fini(&cs->backups[i]);
	memmove(&cs->backups[i], &cs->backups[i + 1],
	    (cs->n_backups - i - 1) * sizeof(backup_rec));
	cs->n_backups--;
	return KV_OK;
}

static void
due_locked(catalog_state *cs)
{
	cs->backups_due = false;
	for (size_t i = 0; i < cs->n_backups; i++)
		cs->backups_due |= cs->backups[i].status != BACKUP_AVAILABLE;
}

static bool
load_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	node *n = arg;
	catalog_state *cs = n->cat;
	backup_rec b;
	(void) k;
	(void) kl;
	if (wire_unpack_backup(v, vl, &b) != KV_OK) {
		fprintf(stderr, "kv-node %u: a backup record does not decode; "
		    "left alone\n", n->index);
		return true;
	}
	backup_rec *grown = realloc(cs->backups,
	    (cs->n_backups + 1) * sizeof(*grown));
	if (grown == NULL) {
		backup_rec_fini(&b);
		return false;
	}
	cs->backups = grown;
	cs->backups[cs->n_backups++] = b;
	return true;
}

kv_err
catalog_backup_open(node *n)
{
	static const uint8_t lo[5] = { 0, 0, 0, 0, 'D' };
	static const uint8_t hi[5] = { 0, 0, 0, 0, 'D' + 1 };
	kv_err rv = store_scan(n->st, lo, sizeof(lo), hi, sizeof(hi),
	    load_one, n);
	due_locked(n->cat); /* before the worker starts: no lock needed */
	return rv;
}

void
catalog_backup_close(node *n)
{
	catalog_state *cs = n->cat;
	for (size_t i = 0; i < cs->n_backups; i++)
		backup_rec_fini(&cs->backups[i]);
	free(cs->backups);
	cs->backups = NULL;
	cs->n_backups = 0;
}

/* The record whose ARN ends in suffix (any status), or NULL. Needs mu. */
static backup_rec *
find_locked(catalog_state *cs, const uint8_t *suffix, size_t len)
{
	for (size_t i = 0; i < cs->n_backups; i++)
		if (strlen(cs->backups[i].arn) == len &&
		    memcmp(cs->backups[i].arn, suffix, len) == 0)
			return &cs->backups[i];
	return NULL;
}

/* Whether a table is being restored from b (its restore_arn, "NAME/
 * backup/SUFFIX", ends in b's suffix). Needs mu. */
static bool
restoring_locked(catalog_state *cs, const backup_rec *b)
{
	size_t sl = strlen(b->arn);
	for (size_t i = 0; i < cs->cat->n_tables; i++) {
		const table *t = &cs->cat->tables[i];
		size_t rl = t->restore_arn != NULL ? strlen(t->restore_arn) : 0;
		if (t->status == TABLE_CREATING && rl > sl &&
		    strcmp(t->restore_arn + rl - sl, b->arn) == 0)
			return true;
	}
	return false;
}

/* Adds b, packed, to the answer's blobs (room for them made by the
 * caller). */
static kv_err
answer_one(arena *a, rpc_response *resp, const backup_rec *b)
{
	uint8_t *v;
	size_t vl;
	kv_err rv = wire_pack_backup(b, &v, &vl);
	if (rv != KV_OK)
		return rv;
	uint8_t *copy = arena_alloc(a, vl > 0 ? vl : 1);
	if (copy == NULL) {
		free(v);
		return KV_ENOMEM;
	}
	memcpy(copy, v, vl);
	free(v);
	resp->blobs[resp->n_blobs] = copy;
	resp->blob_lens[resp->n_blobs++] = vl;
	return KV_OK;
}

static kv_err
make_room(arena *a, rpc_response *resp, size_t n)
{
	resp->blobs = arena_alloc(a, (n + 1) * sizeof(*resp->blobs));
	resp->blob_lens = arena_alloc(a, (n + 1) * sizeof(*resp->blob_lens));
	return resp->blobs != NULL && resp->blob_lens != NULL ? KV_OK :
	    KV_ENOMEM;
}

/* A new backup of table t named name[0..len). Needs mu. */
static kv_err
create_locked(node *n, const table *t, const uint8_t *name, size_t len,
    arena *a, rpc_response *resp)
{
	catalog_state *cs = n->cat;
	backup_rec b;
	char suffix[40];
	memset(&b, 0, sizeof(b));
	b.created_ms = catalog_now_ms();
	/* Ids rise with time and never repeat while a record lives. */
	b.id = (uint64_t) b.created_ms * 1000;
	for (size_t i = 0; i < cs->n_backups; i++)
		if (cs->backups[i].id >= b.id)
			b.id = cs->backups[i].id + 1;
	/* DynamoDB's form: milliseconds, a dash, eight hex digits. */
	uint64_t mix = b.id * 0x9E3779B97F4A7C15ull;
	snprintf(suffix, sizeof(suffix), "%014" PRId64 "-%08x", b.created_ms,
	    (unsigned) (mix >> 32));
	b.status = BACKUP_CREATING;
	b.name = malloc(len + 1);
	b.arn = strdup(suffix);
	kv_err rv = b.name != NULL && b.arn != NULL ? table_copy(t, &b.src) :
	    KV_ENOMEM;
	if (rv != KV_OK) {
		free(b.name);
		free(b.arn);
		return rv;
	}
	memcpy(b.name, name, len);
	b.name[len] = '\0';
	backup_rec *grown = realloc(cs->backups,
	    (cs->n_backups + 1) * sizeof(*grown));
	if (grown == NULL || (rv = save_locked(n, &b)) != KV_OK) {
		if (grown != NULL)
			cs->backups = grown;
		backup_rec_fini(&b);
		return grown == NULL ? KV_ENOMEM : rv;
	}
	cs->backups = grown;
	cs->backups[cs->n_backups++] = b;
	cs->backups_due = true;
	pthread_cond_broadcast(&cs->cv);
	if ((rv = make_room(a, resp, 1)) != KV_OK)
		return rv;
	return answer_one(a, resp, &cs->backups[cs->n_backups - 1]);
}

/*
 * RestoreTableFromBackup: adds want (its name, schema, indexes, billing)
 * with b's partitions, each on the node that holds its copy, to the
 * catalog as CREATING; its global indexes are filled after the restore.
 * Needs mu.
 */
static void
restore_locked(node *n, const backup_rec *b, const table *want,
    rpc_response *resp)
{
	catalog *c = NULL;
	for (size_t i = 0; i < b->src.n_parts; i++)
		if (b->src.parts[i].node >= n->cfg.n_nodes) {
			resp->code = KV_EINVAL;
			resp->message = "the backup is kept on a node that "
			    "has left the cluster";
			return;
		}
	if ((resp->code = catalog_clone(n->cat->cat, &c)) != KV_OK ||
	    (resp->code = catalog_insert_locked(n, c, want)) != KV_OK)
		goto out;
	table *t = catalog_find_mut(c, want->name);
	partition *parts = calloc(b->src.n_parts, sizeof(partition));
	size_t al = strlen(b->src.name) + strlen(b->arn) + 16;
	char *arn = malloc(al);
	if (parts == NULL || arn == NULL) {
		free(parts);
		free(arn);
		resp->code = KV_ENOMEM;
		goto out;
	}
	memcpy(parts, b->src.parts, b->src.n_parts * sizeof(partition));
	for (size_t i = 0; i < b->src.n_parts; i++)
		parts[i].epoch = 1;
	free(t->parts);
	t->parts = parts;
	t->n_parts = b->src.n_parts;
	snprintf(arn, al, "%s/backup/%s", b->src.name, b->arn);
	t->restore_arn = arn;
	t->restore_ms = catalog_now_ms();
	for (size_t i = 0; i < t->n_indexes; i++) {
		table *it = t->indexes[i].local ? NULL :
		    (table *) table_find_id(c, t->indexes[i].table_id);
		if (it != NULL)
			it->backfilling = true;
	}
	catalog_answer_publish_locked(n, &c, catalog_find_mut(c, want->name),
	    resp);
out:
	catalog_free(c);
}

void
catalog_backup_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	catalog_state *cs = n->cat;
	if (cs == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_mutex_lock(&cs->mu);
	backup_rec *b = req->item != NULL ? find_locked(cs, req->item,
	    req->item_len) : NULL;
	if (b != NULL && b->status == BACKUP_DELETED)
		b = NULL;
	switch (req->limit) {
	case RPC_BACKUP_CREATE: {
		const table *t = req->table_name == NULL ? NULL :
		    catalog_find_mut(cs->cat, req->table_name);
		if (t == NULL || table_is_index(t) || req->item == NULL) {
			resp->code = KV_NO_TABLE;
		} else if (!table_serving(t)) {
			resp->code = KV_IN_USE;
			resp->message = t->status == TABLE_CREATING ?
			    "CREATING" : "DELETING";
		} else {
			resp->code = create_locked(n, t, req->item,
			    req->item_len, a, resp);
		}
		break;
	}
	case RPC_BACKUP_DESCRIBE:
		if (b == NULL) {
			resp->code = KV_NO_TABLE;
			resp->message = "backup";
		} else if ((resp->code = make_room(a, resp, 1)) == KV_OK) {
			resp->code = answer_one(a, resp, b);
		}
		break;
	case RPC_BACKUP_LIST:
		if ((resp->code = make_room(a, resp, cs->n_backups)) != KV_OK)
			break;
		for (size_t i = 0; i < cs->n_backups && resp->code == KV_OK;
		    i++) {
			const backup_rec *x = &cs->backups[i];
			if (x->status == BACKUP_DELETED ||
			    (req->table_name != NULL &&
			    strcmp(x->src.name, req->table_name) != 0))
				continue;
			resp->code = answer_one(a, resp, x);
		}
		break;
	case RPC_BACKUP_DELETE:
		if (b == NULL) {
			resp->code = KV_NO_TABLE;
			resp->message = "backup";
		} else if (b->status == BACKUP_CREATING ||
		    restoring_locked(cs, b)) {
			resp->code = KV_IN_USE;
			resp->message = "backup";
		} else {
			b->status = BACKUP_DELETED;
			if ((resp->code = save_locked(n, b)) != KV_OK) {
				b->status = BACKUP_AVAILABLE;
				break;
			}
			cs->backups_due = true;
			pthread_cond_broadcast(&cs->cv);
			if ((resp->code = make_room(a, resp, 1)) == KV_OK)
				resp->code = answer_one(a, resp, b);
		}
		break;
	case RPC_BACKUP_RESTORE_TABLE:
		if (b == NULL || req->table == NULL ||
		    req->table->name == NULL) {
			resp->code = req->table == NULL ? KV_PROTO :
			    KV_NO_TABLE;
			resp->message = "backup";
		} else if (b->status != BACKUP_AVAILABLE) {
			resp->code = KV_IN_USE;
			resp->message = "backup";
		} else {
			restore_locked(n, b, req->table, resp);
		}
		break;
	default:
		resp->code = KV_PROTO;
		break;
	}
	pthread_mutex_unlock(&cs->mu);
}

/* Sends one backup verb to node i and waits for it. */
static kv_err
tell(node *n, uint32_t i, const rpc_request *req, uint64_t *items,
    uint64_t *bytes)
{
	rpc_response resp;
	arena a;
	arena_init(&a);
	kv_err rv = move_call(n, i, req, &a, &resp, BACKUP_STEP_MS);
	for (size_t k = 0; rv == KV_OK && items != NULL && k < resp.n_stats;
	    k++) {
		*items += resp.stats[k].items;
		*bytes += resp.stats[k].bytes;
	}
	if (rv != KV_OK)
		fprintf(stderr, "kv-node %u: backup step %d on node %u: %s\n",
		    n->index, (int) req->op, i, kv_err_name(rv));
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv;
}

/* Whether node i owns a partition of t. */
static bool
owns(const table *t, uint32_t i)
{
	for (size_t p = 0; p < t->n_parts; p++)
		if (t->parts[p].node == i)
			return true;
	return false;
}

/* Takes backup id of table_id (named name) on its owners. */
static bool
take(node *n, uint64_t id, const char *name, uint32_t table_id)
{
	catalog_state *cs = n->cat;
	table snap;
	bool have = false, gone = false;
	kv_err rv = KV_OK;

	pthread_mutex_lock(&cs->mu);
	const table *t = catalog_find_mut(cs->cat, name);
	if (t == NULL || t->id != table_id || !table_serving(t))
		gone = t == NULL || t->id != table_id ||
		    t->status == TABLE_DELETING;
	else
		have = table_copy(t, &snap) == KV_OK;
	pthread_mutex_unlock(&cs->mu);
	if (!have && !gone)
		return true;
	uint64_t items = 0, bytes = 0;
	rpc_request req = { .op = RPC_BACKUP_TAKE, .move_id = id,
	    .table = have ? &snap : NULL };
	for (uint32_t i = 0; have && i < n->cfg.n_nodes && rv == KV_OK; i++)
		if (owns(&snap, i))
			rv = tell(n, i, &req, &items, &bytes);
	pthread_mutex_lock(&cs->mu);
	for (size_t i = 0; i < cs->n_backups; i++) {
		backup_rec *b = &cs->backups[i];
		if (b->id != id || b->status != BACKUP_CREATING)
			continue;
		if (gone) {
			/* Its table went first: the backup fails, and what
			 * was copied goes with it. */
			b->status = BACKUP_DELETED;
			rv = save_locked(n, b);
			if (rv == KV_OK)
				fprintf(stderr, "kv-node %u: backup %s: its "
				    "table was deleted\n", n->index, b->arn);
			else
				b->status = BACKUP_CREATING;
		} else if (rv == KV_OK) {
			backup_rec done = *b;
			done.src = snap;
			done.items = items;
			done.size_bytes = bytes;
			done.status = BACKUP_AVAILABLE;
			if ((rv = save_locked(n, &done)) == KV_OK) {
				table_fini(&b->src);
				*b = done;
				have = false; /* the record took it */
			}
		}
		break;
	}
	pthread_mutex_unlock(&cs->mu);
	if (have)
		table_fini(&snap);
	return rv != KV_OK;
}

/* Drops backup id's copies everywhere, then its record. */
static bool
drop(node *n, uint64_t id, const table *src)
{
	rpc_request req = { .op = RPC_BACKUP_DROP, .move_id = id };
	kv_err rv = KV_OK;
	for (uint32_t i = 0; i < n->cfg.n_nodes && rv == KV_OK; i++) {
		pthread_mutex_lock(&n->cat->mu);
		bool ask = owns(src, i) || catalog_node_eligible(n, i);
		pthread_mutex_unlock(&n->cat->mu);
		if (ask)
			rv = tell(n, i, &req, NULL, NULL);
	}
	if (rv != KV_OK)
		return true;
	pthread_mutex_lock(&n->cat->mu);
	for (size_t i = 0; i < n->cat->n_backups; i++)
		if (n->cat->backups[i].id == id &&
		    n->cat->backups[i].status == BACKUP_DELETED) {
			rv = forget_locked(n, i);
			break;
		}
	pthread_mutex_unlock(&n->cat->mu);
	return rv != KV_OK;
}

bool
catalog_backup_work(node *n)
{
	catalog_state *cs = n->cat;
	bool again = false;
	for (;;) {
		/* One backup at a time, each looked up afresh: the list may
		 * change while the owners work. */
		uint64_t id = 0;
		backup_status st = BACKUP_AVAILABLE;
		char *name = NULL;
		uint32_t table_id = 0;
		table src;
		bool have = false;
		pthread_mutex_lock(&cs->mu);
		for (size_t i = 0; i < cs->n_backups && id == 0; i++) {
			backup_rec *b = &cs->backups[i];
			if (b->status == BACKUP_AVAILABLE || b->id == 0)
				continue;
			id = b->id;
			st = b->status;
			name = strdup(b->src.name);
			table_id = b->src.id;
			have = table_copy(&b->src, &src) == KV_OK;
		}
		pthread_mutex_unlock(&cs->mu);
		if (id == 0)
			break;
		bool failed = name == NULL || !have ? true :
		    st == BACKUP_CREATING ? take(n, id, name, table_id) :
		    drop(n, id, &src);
		free(name);
		if (have)
			table_fini(&src);
		if (failed) {
			again = true;
			break;
		}
	}
	pthread_mutex_lock(&cs->mu);
	due_locked(cs);
	pthread_mutex_unlock(&cs->mu);
	return again;
}

kv_err
catalog_backup_restore(node *n, const table *t)
{
	catalog_state *cs = n->cat;
	uint64_t id = 0;
	bool src_local = false;
	const char *suffix = strrchr(t->restore_arn, '/');
	if (suffix == NULL)
		return KV_CORRUPT;
	suffix++;
	pthread_mutex_lock(&cs->mu);
	backup_rec *b = find_locked(cs, (const uint8_t *) suffix,
	    strlen(suffix));
	if (b != NULL && b->status == BACKUP_AVAILABLE) {
		id = b->id;
		src_local = table_has_local(&b->src);
	}
	pthread_mutex_unlock(&cs->mu);
	if (id == 0)
		return KV_NO_TABLE; /* cannot be: deletion waits for us */
	rpc_request req = { .op = RPC_BACKUP_RESTORE, .move_id = id,
	    .table = t,
	    .limit = src_local && !table_has_local(t) ?
	    RPC_BACKUP_NO_LOCAL : 0 };
	kv_err rv = KV_OK;
	for (uint32_t i = 0; i < n->cfg.n_nodes && rv == KV_OK; i++)
		if (owns(t, i))
			rv = tell(n, i, &req, NULL, NULL);
	if (rv == KV_OK)
		fprintf(stderr, "kv-node %u: table %s restored from %s\n",
		    n->index, t->name, t->restore_arn);
	return rv;
}
