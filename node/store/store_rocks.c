/*
 * store_rocks.c — the RocksDB engine of store.h. The only file that
 * includes RocksDB; its errptr strings are turned into KV_IO here.
 *
 * Options are for small values: a bloom filter on point lookups, a bounded
 * block cache (the node's memory budget), no compression of the small upper
 * levels. Writes go through the WAL; `sync` adds an fsync per batch.
 *
 * The memory budget (memory-mb, config.h) is shared as store.h says: three
 * eighths for the block cache, which also holds the index and filter
 * blocks (so they cannot grow past it as the data does), a sixteenth for
 * each of the two memtables (RocksDB's default count: one filling, one
 * being flushed). The figures behind it are in docs/design-notes.md,
 * "Cost that stays flat".
 *
 * The first 12 bytes of a storage key (table id and hash: an item
 * collection, core/keyenc.h) are the prefix of a bloom filter in each
 * memtable: a read of a key whose collection the memtable does not hold
 * skips the memtable's skip list, which on a large table was a quarter of
 * a GetItem's CPU (the walk down a 64 MB skip list misses the caches at
 * every level). The same prefix goes into each file's bloom filter. A scan
 * within one collection of a table (a Query: both bounds start with the
 * same 12 bytes, not the node's own table id 0) reads in prefix mode, so
 * it seeks only in the memtables and files whose filter holds the
 * collection: on three million items, Query went from 0.76 to 0.91 of a
 * small table's (docs/design-notes.md, "Cost that stays flat"). Every
 * other scan reads in total order (bounded()), so the prefix never cuts
 * one short.
 *
 * The node's own records (table id 0: prepared transactions, decisions,
 * tokens, index outboxes; every key below SPLIT_KEY) live in a column
 * family of their own, "node", with a small memtable; the tables' keys
 * stay in the default one. Those records are written and deleted within
 * milliseconds (an outbox's by range), and in the tables' memtable they
 * made every skip-list walk of an item longer and every read rebuild the
 * list of the outbox's range deletions. The split is by key, here only:
 * every key below SPLIT_KEY sorts before every key above it, so a scan
 * across both reads the node's family, then the tables'. Both are
 * written by one batch, atomically. A store from before the split has
 * its node records moved over at open, in one batch.
 */
#include "store.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rocksdb/c.h>

#define MEMORY_MB_DEFAULT 384 /* config.h's CONFIG_MEMORY_MB */
#define MEMTABLE_MIN_BYTES (4u << 20)
#define MEMTABLE_MAX_BYTES (32u << 20)
#define KEY_PREFIX 12 /* table id and hash */
#define LOG_LEVEL_INFO 1 /* RocksDB's InfoLogLevel: DEBUG 0, INFO 1, ... */
#define LOG_FILE_BYTES (8u * 1024 * 1024)
#define LOG_FILES_KEPT 4
#define NODE_MEMTABLE_BYTES (4u << 20)

/* The first key of table 1: the node's records are the keys below it. */
static const uint8_t SPLIT_KEY[4] = { 0, 0, 0, 1 };

enum { CF_TABLES, CF_NODE, CF_COUNT };

typedef struct rocks {
	store base;
	rocksdb_t *db;
	rocksdb_options_t *opts;      /* the DB's and the tables' family's */
	rocksdb_options_t *node_opts; /* the node family's */
	rocksdb_column_family_handle_t *cf[CF_COUNT];
	rocksdb_block_based_table_options_t *topts;
	rocksdb_cache_t *cache;
	rocksdb_filterpolicy_t *filter; /* owned by topts once set */
	rocksdb_readoptions_t *ropts;
	rocksdb_writeoptions_t *wopts;
	bool manual;  /* log records wait in the process for rocks_flush */
	char *dir;
	_Atomic uint64_t loads; /* names the files of sorted loads */
} rocks;

static kv_err
take_err(char *err)
{
	if (err == NULL)
		return KV_OK;
	fprintf(stderr, "kv-node: rocksdb: %s\n", err);
	rocksdb_free(err);
	return KV_IO;
}

/* Byte order of two keys, as RocksDB's default comparator has it. */
static int
key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c != 0 ? c : (al > bl) - (al < bl);
}

/* Whether key k belongs to the node's family (it sorts below SPLIT_KEY). */
static bool
node_key(const uint8_t *k, size_t kl)
{
	return key_cmp(k, kl, SPLIT_KEY, sizeof(SPLIT_KEY)) < 0;
}

static rocksdb_column_family_handle_t *
cf_of(rocks *r, const uint8_t *k, size_t kl)
{
	return r->cf[node_key(k, kl) ? CF_NODE : CF_TABLES];
}

static kv_err
rocks_get(store *s, const uint8_t *k, size_t kl, uint8_t **v, size_t *vl,
    bool *found)
{
	rocks *r = (rocks *) s;
	char *err = NULL;
	size_t n = 0;
	char *val = rocksdb_get_cf(r->db, r->ropts, cf_of(r, k, kl),
	    (const char *) k, kl, &n, &err);
	if (err != NULL)
		return take_err(err);
	*found = val != NULL;
	*v = NULL;
	*vl = 0;
	if (val == NULL)
		return KV_OK;
	/* rocksdb_get's buffer is malloc'd; hand it over as it is. */
	*v = (uint8_t *) val;
	*vl = n;
	return KV_OK;
}

/* Adds the deletion of [lo, hi) to wb, in each family it reaches. */
static void
delete_range(rocks *r, rocksdb_writebatch_t *wb, const uint8_t *lo,
    size_t lol, const uint8_t *hi, size_t hil)
{
	const uint8_t *split = SPLIT_KEY;
	size_t sl = sizeof(SPLIT_KEY);
	if (node_key(lo, lol)) {
		bool both = !node_key(hi, hil);
		rocksdb_writebatch_delete_range_cf(wb, r->cf[CF_NODE],
		    (const char *) lo, lol,
		    (const char *) (both ? split : hi), both ? sl : hil);
		if (!both)
			return;
		lo = split;
		lol = sl;
	}
	if (key_cmp(lo, lol, hi, hil) < 0)
		rocksdb_writebatch_delete_range_cf(wb, r->cf[CF_TABLES],
		    (const char *) lo, lol, (const char *) hi, hil);
}

static kv_err
rocks_write(store *s, const store_batch *b)
{
	rocks *r = (rocks *) s;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	char *err = NULL;
	if (wb == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		const store_op *op = &b->ops[i];
		switch (op->kind) {
		case STORE_PUT:
			rocksdb_writebatch_put_cf(wb,
			    cf_of(r, op->key, op->key_len),
			    (const char *) op->key, op->key_len,
			    (const char *) op->val, op->val_len);
			break;
		case STORE_DELETE:
			rocksdb_writebatch_delete_cf(wb,
			    cf_of(r, op->key, op->key_len),
			    (const char *) op->key, op->key_len);
			break;
		case STORE_DELETE_RANGE:
			delete_range(r, wb, op->key, op->key_len, op->val,
			    op->val_len);
			break;
		}
	}
	rocksdb_write(r->db, r->wopts, wb, &err);
	rocksdb_writebatch_destroy(wb);
	return take_err(err);
}

static kv_err
rocks_flush(store *s)
{
	rocks *r = (rocks *) s;
	char *err = NULL;
	if (!r->manual)
		return KV_OK;
	/* Written to the file (the page cache): what kill -9 cannot undo. */
	rocksdb_flush_wal(r->db, 0, &err);
	return take_err(err);
}

/*
 * Read options bounding an iterator to [lo, hi) (hi NULL: no upper
 * bound), or NULL without memory. Without the bounds, stepping past the
 * last key of the range to learn that it was the last would walk every
 * deleted key behind it until a live one: the replicator's read of one
 * index's outbox stepped over the deleted records of the next index,
 * thousands a round (docs/design-notes.md, "Global secondary
 * indexes"). The options copy the bounds.
 */
static rocksdb_readoptions_t *
bounded(const uint8_t *lo, size_t lol, const uint8_t *hi, size_t hil)
{
	static const uint8_t node_keys[4] = { 0, 0, 0, 0 };
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	if (ro == NULL)
		return NULL;
	if (hi != NULL && lol >= KEY_PREFIX && hil >= KEY_PREFIX &&
	    memcmp(lo, hi, KEY_PREFIX) == 0 &&
	    memcmp(lo, node_keys, sizeof(node_keys)) != 0) {
		/* Inside one collection: files without it are skipped. */
		rocksdb_readoptions_set_prefix_same_as_start(ro, 1);
	} else {
		/*
		 * Across collections (prefixes), or among the node's own
		 * records (table id 0: a transaction's, an outbox's), which
		 * are few and not read by Query: total order.
		 */
		rocksdb_readoptions_set_total_order_seek(ro, 1);
	}
	rocksdb_readoptions_set_iterate_lower_bound(ro, (const char *) lo,
	    lol);
	if (hi != NULL)
		rocksdb_readoptions_set_iterate_upper_bound(ro,
		    (const char *) hi, hil);
	return ro;
}

/* One family's share of a scan's range: [lo, hi) (hi NULL: no end). */
typedef struct scan_part {
	int cf;
	const uint8_t *lo, *hi;
	size_t lol, hil;
} scan_part;

/* Splits [lo, hi) into the share of each family, in byte order. */
static size_t
scan_parts(const uint8_t *lo, size_t lol, const uint8_t *hi, size_t hil,
    scan_part p[CF_COUNT])
{
	size_t n = 0;
	if (hi != NULL && key_cmp(lo, lol, hi, hil) >= 0)
		return 0;
	if (node_key(lo, lol)) {
		bool both = hi == NULL || !node_key(hi, hil);
		p[n++] = (scan_part) { CF_NODE, lo, both ? SPLIT_KEY : hi,
		    lol, both ? sizeof(SPLIT_KEY) : hil };
		if (!both)
			return n;
		lo = SPLIT_KEY;
		lol = sizeof(SPLIT_KEY);
	}
	if (hi == NULL || key_cmp(lo, lol, hi, hil) < 0)
		p[n++] = (scan_part) { CF_TABLES, lo, hi, lol, hil };
	return n;
}

/*
 * Calls fn for every key of part p, ascending or (rev) descending, as of
 * snap (NULL: when the iterator is made); *stop is set when fn says so.
 */
static kv_err
scan_part_run(rocks *r, const scan_part *p, const rocksdb_snapshot_t *snap,
    bool rev, store_scan_fn fn, void *arg, bool *stop)
{
	const uint8_t *lo = p->lo, *hi = p->hi;
	size_t lol = p->lol, hil = p->hil;
	rocksdb_readoptions_t *ro = bounded(lo, lol, hi, hil);
	if (ro == NULL)
		return KV_ENOMEM;
	if (snap != NULL)
		rocksdb_readoptions_set_snapshot(ro, snap);
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(r->db, ro,
	    r->cf[p->cf]);
	if (it == NULL) {
		rocksdb_readoptions_destroy(ro);
		return KV_ENOMEM;
	}
	if (!rev) {
		rocksdb_iter_seek(it, (const char *) lo, lol);
	} else if (hi == NULL) {
		rocksdb_iter_seek_to_last(it);
	} else {
		/* The last key <= hi, then step below hi (hi is exclusive). */
		rocksdb_iter_seek_for_prev(it, (const char *) hi, hil);
		if (rocksdb_iter_valid(it)) {
			size_t kl;
			const char *k = rocksdb_iter_key(it, &kl);
			if (kl == hil && memcmp(k, hi, hil) == 0)
				rocksdb_iter_prev(it);
		}
	}
	for (; rocksdb_iter_valid(it);
	    rev ? rocksdb_iter_prev(it) : rocksdb_iter_next(it)) {
		size_t kl, vl;
		const uint8_t *k = (const uint8_t *) rocksdb_iter_key(it, &kl);
		const uint8_t *v = (const uint8_t *) rocksdb_iter_value(it,
		    &vl);
		if (rev ? key_cmp(k, kl, lo, lol) < 0 :
		    hi != NULL && key_cmp(k, kl, hi, hil) >= 0)
			break;
		if (!fn(arg, k, kl, v, vl)) {
			*stop = true;
			break;
		}
	}
	char *err = NULL;
	rocksdb_iter_get_error(it, &err);
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	return take_err(err);
}

/*
 * A scan of [lo, hi): each family's share in turn. One that spans both
 * reads them from one snapshot, so that it sees the store of one moment
 * as an iterator of one family does.
 */
static kv_err
scan_range(rocks *r, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, bool rev, store_scan_fn fn, void *arg)
{
	scan_part p[CF_COUNT];
	size_t n = scan_parts(lo, lol, hi, hil, p);
	const rocksdb_snapshot_t *snap = n > 1 ?
	    rocksdb_create_snapshot(r->db) : NULL;
	kv_err rv = KV_OK;
	bool stop = false;
	for (size_t i = 0; i < n && rv == KV_OK && !stop; i++)
		rv = scan_part_run(r, &p[rev ? n - 1 - i : i], snap, rev, fn,
		    arg, &stop);
	if (snap != NULL)
		rocksdb_release_snapshot(r->db, snap);
	return rv;
}

static kv_err
rocks_scan(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	return scan_range((rocks *) s, lo, lol, hi, hil, false, fn, arg);
}

static kv_err
rocks_scan_rev(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	return scan_range((rocks *) s, lo, lol, hi, hil, true, fn, arg);
}

static void
rocks_close(store *s)
{
	rocks *r = (rocks *) s;
	if (r->db != NULL) {
		/* Log records still in the process go to the file first. */
		(void) rocks_flush(s);
		for (int i = 0; i < CF_COUNT; i++)
			if (r->cf[i] != NULL)
				rocksdb_column_family_handle_destroy(r->cf[i]);
		rocksdb_close(r->db);
	}
	if (r->ropts != NULL)
		rocksdb_readoptions_destroy(r->ropts);
	if (r->wopts != NULL)
		rocksdb_writeoptions_destroy(r->wopts);
	if (r->opts != NULL)
		rocksdb_options_destroy(r->opts);
	if (r->node_opts != NULL)
		rocksdb_options_destroy(r->node_opts);
	if (r->topts != NULL)
		rocksdb_block_based_options_destroy(r->topts);
	if (r->cache != NULL)
		rocksdb_cache_destroy(r->cache);
	store_base_fini(&r->base);
	free(r->dir);
	free(r);
}

/*
 * Sorted loads (store.h): the pairs go into table files of LOAD_FILE_BYTES
 * in the store's folder, named LOAD_FILE_PREFIX..., written with the
 * store's own table options (its filters and prefix), each synced when
 * full; at the end RocksDB takes the files in (moved, not copied) at a
 * sequence number above every write. Into a range that holds nothing
 * below, they land on the last level, where no compaction rewrites them.
 * Files of 32 MB, each synced in one go, stalled the node's other
 * requests for 250-430 ms now and then during a move; at 4 MB they did
 * not (docs/design-notes.md, "Adaptive capacity"). A process that dies
 * while a load is open leaves its files behind, which the next open
 * deletes. Loads carry tables' keys (a move's range), so they go to the
 * tables' family.
 */
#define LOAD_FILE_BYTES (4u << 20)
#define LOAD_FILE_PREFIX "kvload-"

typedef struct rocks_load {
	store_load base;
	rocksdb_envoptions_t *env;
	rocksdb_sstfilewriter_t *w; /* the file being written; NULL: none */
	char **paths;               /* every file, the last one being written */
	size_t n, cap;
} rocks_load;

static kv_err
load_next_file(rocks_load *l)
{
	rocks *r = (rocks *) l->base.s;
	char *err = NULL;
	if (l->n == l->cap) {
		size_t cap = l->cap == 0 ? 8 : l->cap * 2;
		char **np = realloc(l->paths, cap * sizeof(*np));
		if (np == NULL)
			return KV_ENOMEM;
		l->paths = np;
		l->cap = cap;
	}
	size_t len = strlen(r->dir) + sizeof(LOAD_FILE_PREFIX) + 48;
	char *path = malloc(len);
	if (path == NULL)
		return KV_ENOMEM;
	snprintf(path, len, "%s/" LOAD_FILE_PREFIX "%llu.sst", r->dir,
	    (unsigned long long) atomic_fetch_add(&r->loads, 1));
	l->w = rocksdb_sstfilewriter_create(l->env, r->opts);
	if (l->w == NULL) {
		free(path);
		return KV_ENOMEM;
	}
	l->paths[l->n++] = path;
	rocksdb_sstfilewriter_open(l->w, path, &err);
	return take_err(err);
}

/* Finishes the file being written (synced), if there is one. */
static kv_err
load_end_file(rocks_load *l)
{
	char *err = NULL;
	if (l->w == NULL)
		return KV_OK;
	rocksdb_sstfilewriter_finish(l->w, &err);
	rocksdb_sstfilewriter_destroy(l->w);
	l->w = NULL;
	return take_err(err);
}

static void
load_free(rocks_load *l)
{
	if (l->w != NULL)
		rocksdb_sstfilewriter_destroy(l->w);
	for (size_t i = 0; i < l->n; i++) {
		(void) unlink(l->paths[i]); /* taken in: gone already */
		free(l->paths[i]);
	}
	free(l->paths);
	if (l->env != NULL)
		rocksdb_envoptions_destroy(l->env);
	free(l);
}

static kv_err
rocks_load_open(store *s, store_load **out)
{
	rocks_load *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return KV_ENOMEM;
	l->base.s = s;
	if ((l->env = rocksdb_envoptions_create()) == NULL) {
		free(l);
		return KV_ENOMEM;
	}
	*out = &l->base;
	return KV_OK;
}

static kv_err
rocks_load_put(store_load *base, const uint8_t *k, size_t kl,
    const uint8_t *v, size_t vl)
{
	rocks_load *l = (rocks_load *) base;
	char *err = NULL;
	kv_err rv = l->w == NULL ? load_next_file(l) : KV_OK;
	if (rv != KV_OK)
		return rv;
	if (v != NULL)
		rocksdb_sstfilewriter_put(l->w, (const char *) k, kl,
		    (const char *) v, vl, &err);
	else
		rocksdb_sstfilewriter_delete(l->w, (const char *) k, kl, &err);
	if ((rv = take_err(err)) != KV_OK)
		return rv;
	uint64_t size = 0;
	rocksdb_sstfilewriter_file_size(l->w, &size);
	return size >= LOAD_FILE_BYTES ? load_end_file(l) : KV_OK;
}

static kv_err
rocks_load_finish(store_load *base)
{
	rocks_load *l = (rocks_load *) base;
	rocks *r = (rocks *) base->s;
	char *err = NULL;
	kv_err rv = load_end_file(l);
	if (rv == KV_OK && l->n > 0) {
		rocksdb_ingestexternalfileoptions_t *o =
		    rocksdb_ingestexternalfileoptions_create();
		if (o == NULL) {
			rv = KV_ENOMEM;
		} else {
			rocksdb_ingestexternalfileoptions_set_move_files(o, 1);
			rocksdb_ingest_external_file(r->db,
			    (const char *const *) l->paths, l->n, o, &err);
			rocksdb_ingestexternalfileoptions_destroy(o);
			rv = take_err(err);
		}
	}
	load_free(l);
	return rv;
}

static void
rocks_load_abort(store_load *base)
{
	load_free((rocks_load *) base);
}

/* Deletes the files of loads a dead process left in dir. */
static void
load_files_drop(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, LOAD_FILE_PREFIX,
		    sizeof(LOAD_FILE_PREFIX) - 1) != 0)
			continue;
		char path[4096];
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
		    (int) sizeof(path))
			(void) unlink(path);
	}
	closedir(d);
}

/* A property's value summed over the families. */
static uint64_t
property(rocks *r, const char *name)
{
	uint64_t sum = 0;
	for (int i = 0; i < CF_COUNT; i++) {
		uint64_t v = 0;
		if (rocksdb_property_int_cf(r->db, r->cf[i], name, &v) == 0)
			sum += v;
	}
	return sum;
}

static void
rocks_memory(store *s, store_memory *m)
{
	rocks *r = (rocks *) s;
	m->cache = rocksdb_cache_get_usage(r->cache);
	m->cache_capacity = rocksdb_cache_get_capacity(r->cache);
	m->memtables = property(r, "rocksdb.cur-size-all-mem-tables");
	m->table_readers = property(r, "rocksdb.estimate-table-readers-mem");
}

static const store_ops rocks_ops = {
	.get = rocks_get,
	.write = rocks_write,
	.flush = rocks_flush,
	.scan = rocks_scan,
	.scan_rev = rocks_scan_rev,
	/* An iterator reads the snapshot taken when it was made, and
	 * writes while it is open do not disturb it. */
	.scan_snap = rocks_scan,
	.memory = rocks_memory,
	.close = rocks_close,
	.load_open = rocks_load_open,
	.load_put = rocks_load_put,
	.load_finish = rocks_load_finish,
	.load_abort = rocks_load_abort,
};

/*
 * The collection prefix: a key's first KEY_PREFIX bytes. RocksDB's own
 * fixed-prefix transform asserts that every key it cuts is long enough,
 * but a prefix-mode iterator stepping out of its collection cuts the
 * neighbour it lands on, which may be a shorter key (a node's metadata):
 * here a shorter key is its own prefix, which no collection's equals, so
 * the iterator stops there as it should.
 */
static char *
prefix_of(void *state, const char *key, size_t len, size_t *out)
{
	(void) state;
	*out = len < KEY_PREFIX ? len : KEY_PREFIX;
	return (char *) key;
}

static unsigned char
prefix_in_domain(void *state, const char *key, size_t len)
{
	(void) state;
	(void) key;
	return len >= KEY_PREFIX;
}

static unsigned char
prefix_in_range(void *state, const char *key, size_t len)
{
	(void) state;
	(void) key;
	return len == KEY_PREFIX;
}

static const char *
prefix_name(void *state)
{
	(void) state;
	return "kv.CollectionPrefix.12";
}

static void
prefix_free(void *state)
{
	(void) state;
}

/*
 * A store written before the node's records had a family of their own
 * holds them in the tables' family: move them over, all in one batch (a
 * death in the middle leaves them where they were, to be moved at the
 * next open). Sets *err as RocksDB does.
 */
static void
migrate_node_keys(rocks *r, char **err)
{
	rocksdb_readoptions_t *ro = bounded((const uint8_t *) "", 0,
	    SPLIT_KEY, sizeof(SPLIT_KEY));
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	rocksdb_iterator_t *it = ro != NULL ?
	    rocksdb_create_iterator_cf(r->db, ro, r->cf[CF_TABLES]) : NULL;
	size_t moved = 0;
	if (it == NULL || wb == NULL) {
		*err = strdup("out of memory moving the node's records");
		goto out;
	}
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it);
	    rocksdb_iter_next(it)) {
		size_t kl, vl;
		const char *k = rocksdb_iter_key(it, &kl);
		const char *v = rocksdb_iter_value(it, &vl);
		rocksdb_writebatch_put_cf(wb, r->cf[CF_NODE], k, kl, v, vl);
		moved++;
	}
	rocksdb_iter_get_error(it, err);
	if (*err == NULL && moved > 0) {
		rocksdb_writebatch_delete_range_cf(wb, r->cf[CF_TABLES], "", 0,
		    (const char *) SPLIT_KEY, sizeof(SPLIT_KEY));
		rocksdb_write(r->db, r->wopts, wb, err);
		if (*err == NULL)
			rocksdb_flush_wal(r->db, 1, err);
		if (*err == NULL)
			fprintf(stderr, "kv-node: moved %zu node records to "
			    "their own column family\n", moved);
	}
out:
	if (it != NULL)
		rocksdb_iter_destroy(it);
	if (wb != NULL)
		rocksdb_writebatch_destroy(wb);
	if (ro != NULL)
		rocksdb_readoptions_destroy(ro);
}

kv_err
store_open_rocks(const char *dir, bool sync, uint32_t memory_mb,
    store **out, char *why, size_t whylen)
{
	uint64_t budget = (uint64_t) (memory_mb != 0 ? memory_mb :
	    MEMORY_MB_DEFAULT) << 20;
	uint64_t memtable = budget / 16;
	if (memtable < MEMTABLE_MIN_BYTES)
		memtable = MEMTABLE_MIN_BYTES;
	if (memtable > MEMTABLE_MAX_BYTES)
		memtable = MEMTABLE_MAX_BYTES;
	rocks *r = calloc(1, sizeof(*r));
	char *err = NULL;
	if (r == NULL)
		return KV_ENOMEM;
	if (store_base_init(&r->base, &rocks_ops) != KV_OK ||
	    (r->dir = strdup(dir)) == NULL) {
		store_base_fini(&r->base);
		free(r);
		return KV_ENOMEM;
	}
	load_files_drop(dir);
	r->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(r->opts, 1);
	rocksdb_options_increase_parallelism(r->opts, 2);
	rocksdb_options_set_max_open_files(r->opts, 512);
	/*
	 * RocksDB's own log (the LOG file) at INFO: at DEBUG, the level this
	 * library build starts at, every log flush (store_flush, once per
	 * read of requests) printed and appended a line there, which cost
	 * the node 7 % of its CPU per GetItem and grew the file by about
	 * 1 MB a second under load. The file is also capped and rotated.
	 */
	rocksdb_options_set_info_log_level(r->opts, LOG_LEVEL_INFO);
	rocksdb_options_set_max_log_file_size(r->opts, LOG_FILE_BYTES);
	rocksdb_options_set_keep_log_file_num(r->opts, LOG_FILES_KEPT);
	r->topts = rocksdb_block_based_options_create();
	r->cache = rocksdb_cache_create_lru(budget / 8 * 3);
	rocksdb_options_set_write_buffer_size(r->opts, memtable);
	rocksdb_options_set_max_write_buffer_number(r->opts, 2);
	rocksdb_block_based_options_set_block_cache(r->topts, r->cache);
	r->filter = rocksdb_filterpolicy_create_bloom_full(10);
	rocksdb_block_based_options_set_filter_policy(r->topts, r->filter);
	rocksdb_block_based_options_set_cache_index_and_filter_blocks(
	    r->topts, 1);
	rocksdb_options_set_block_based_table_factory(r->opts, r->topts);
	rocksdb_options_set_compression(r->opts, rocksdb_no_compression);
	rocksdb_options_set_create_missing_column_families(r->opts, 1);
	/* The node's family: the same, without the collection prefix (its
	 * keys have none) and with a small memtable. */
	r->node_opts = rocksdb_options_create_copy(r->opts);
	rocksdb_options_set_write_buffer_size(r->node_opts,
	    NODE_MEMTABLE_BYTES);
	rocksdb_options_set_prefix_extractor(r->opts,
	    rocksdb_slicetransform_create(NULL, prefix_free, prefix_of,
	    prefix_in_domain, prefix_in_range, prefix_name));
	rocksdb_options_set_memtable_prefix_bloom_size_ratio(r->opts, 0.1);
	r->ropts = rocksdb_readoptions_create();
	r->wopts = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(r->wopts, sync ? 1 : 0);
	/*
	 * Without sync, the log records of the writes that one read of
	 * requests brings wait in the process and go to the file in one
	 * write, at the flush before the replies (store.h). With sync, each
	 * write is synced as before.
	 */
	r->manual = !sync;
	rocksdb_options_set_manual_wal_flush(r->opts, r->manual ? 1 : 0);
	const char *names[CF_COUNT] = { "default", "node" };
	const rocksdb_options_t *cf_opts[CF_COUNT] = { r->opts, r->node_opts };
	r->db = rocksdb_open_column_families(r->opts, dir, CF_COUNT, names,
	    cf_opts, r->cf, &err);
	if (err == NULL)
		migrate_node_keys(r, &err);
	if (err != NULL) {
		snprintf(why, whylen, "cannot open store in %s: %s", dir, err);
		rocksdb_free(err);
		rocks_close(&r->base);
		return KV_IO;
	}
	*out = &r->base;
	return KV_OK;
}
