/*
 * store_rocks_test.c — what the store (node/store/store.h) must keep with
 * RocksDB's own layout: the node's records in a family of their own
 * (read with the tables' keys as one order, on both engines), an older
 * store's records moved over at open, and durability: across close and
 * open, after a SIGKILL of a writing process, with sync, and a failed
 * open that says why. Shares store_fixture.h with store_test.c.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "store_fixture.h"

/* ---- the node's records and the tables' keys (two RocksDB families) ---- */

/*
 * Keys below {0,0,0,1} (table id 0: the node's own records) live in a
 * family of their own in RocksDB (store_rocks.c). Both engines must read
 * them and the tables' keys as one byte order, stop a scan where the
 * callback says even at the seam, and delete ranges across it.
 */
static const uint8_t N0[] = { 0, 0, 0 }, N1[] = { 0, 0, 0, 0, 'a' },
    N2[] = { 0, 0, 0, 0, 'z' }, T1[] = { 0, 0, 0, 1 },
    T2[] = { 0, 0, 0, 1, 'x' }, T3[] = { 0, 0, 0, 2 }, T4[] = { 'b' };
static const uint8_t *const SEAM_KEYS[] = { N0, N1, N2, T1, T2, T3, T4 };
static const size_t SEAM_LENS[] = { 3, 5, 5, 4, 5, 4, 1 };

/* A scan (rev: backward) of [lo, hi) stopping after stop keys (0:
 * never) sees exactly SEAM_KEYS[from..] (rev: downwards), n of them. */
static void
expect_seam_scan(bool rev, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, size_t stop, size_t from, size_t n)
{
	collected c = { .stop_after = stop };
	kv_err rv = rev ? store_scan_rev(S, lo, lol, hi, hil, collect, &c) :
	    store_scan(S, lo, lol, hi, hil, collect, &c);
	cr_assert_eq(rv, KV_OK);
	cr_assert_eq(c.n, n, "%s scan saw %zu keys, want %zu",
	    rev ? "backward" : "forward", c.n, n);
	for (size_t i = 0; i < n; i++) {
		size_t w = rev ? from - i : from + i;
		cr_assert(bytecmp(c.p[i].k, c.p[i].kl, SEAM_KEYS[w],
		    SEAM_LENS[w]) == 0, "key %zu should be number %zu", i, w);
	}
	collected_fini(&c);
}

STORE_TEST(node_records_and_tables_read_as_one_order)
{
	for (size_t i = 0; i < 7; i++)
		put(SEAM_KEYS[i], SEAM_LENS[i], "v", 1);
	expect_seam_scan(false, (const uint8_t *) "", 0, NULL, 0, 0, 0, 7);
	expect_seam_scan(true, (const uint8_t *) "", 0, NULL, 0, 0, 6, 7);
	/* Stopped at the last node record: the tables are not read. */
	expect_seam_scan(false, (const uint8_t *) "", 0, NULL, 0, 3, 0, 3);
	expect_seam_scan(false, (const uint8_t *) "", 0, NULL, 0, 2, 0, 2);
	/* Backward, stopped at the first table key. */
	expect_seam_scan(true, (const uint8_t *) "", 0, NULL, 0, 4, 6, 4);
	/* Bounds on either side of the seam, and at it. */
	expect_seam_scan(false, N1, 5, T2, 5, 0, 1, 3);
	expect_seam_scan(true, N1, 5, T2, 5, 0, 3, 3);
	expect_seam_scan(false, N2, 5, T1, 4, 0, 2, 1);
	expect_seam_scan(false, T1, 4, NULL, 0, 0, 3, 4);
	expect_seam_scan(true, N0, 3, T1, 4, 0, 2, 3);
	expect_seam_scan(false, T2, 5, N2, 5, 0, 0, 0);
	/* A range deletion across the seam. */
	del_range((const uint8_t[]) { 0, 0, 0, 0, 'b' }, 5,
	    (const uint8_t[]) { 0, 0, 0, 1, 'y' }, 5);
	expect_value(N1, 5, "v", 1);
	expect_missing(N2, 5);
	expect_missing(T1, 4);
	expect_missing(T2, 5);
	expect_value(T3, 4, "v", 1);
	collected c = { 0 };
	cr_assert_eq(store_scan(S, (const uint8_t *) "", 0, NULL, 0, collect,
	    &c), KV_OK);
	cr_assert_eq(c.n, 4);
	static const size_t left[] = { 0, 1, 5, 6 };
	for (size_t i = 0; i < 4; i++)
		cr_assert(bytecmp(c.p[i].k, c.p[i].kl, SEAM_KEYS[left[i]],
		    SEAM_LENS[left[i]]) == 0, "key %zu", i);
	collected_fini(&c);
}

/* A snapshot scan across the seam sees both sides as they were when it
 * began, though its callback writes on the far side. */
static bool
seam_writer(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	collected *c = arg;
	if (c->n == 0) {
		del(T4, 1);
		put(T2, 5, "new", 3);
	}
	return collect(arg, k, kl, v, vl);
}

STORE_TEST(snapshot_scan_across_the_seam)
{
	collected c = { 0 };

	put(N1, 5, "old", 3);
	put(T1, 4, "old", 3);
	put(T4, 1, "old", 3);
	cr_assert_eq(store_scan_snap(S, (const uint8_t *) "", 0, NULL, 0,
	    seam_writer, &c), KV_OK);
	cr_assert_eq(c.n, 3);
	cr_assert(bytecmp(c.p[2].k, c.p[2].kl, T4, 1) == 0);
	collected_fini(&c);
	expect_missing(T4, 1);
	expect_value(T2, 5, "new", 3);
}

/* ---- RocksDB durability ---- */

Test(store, rocks_reopen_keeps_data)
{
	static const uint8_t bin[] = { 0x00, 0xff, 0x00 };

	open_engine(ENGINE_ROCKS);
	put("kept", 4, "value", 5);
	put(bin, sizeof(bin), bin, sizeof(bin));
	put("empty", 5, "", 0);
	put("deleted", 7, "x", 1);
	del("deleted", 7);
	put("r1", 2, "x", 1);
	put("r2", 2, "x", 1);
	del_range("r", 1, "s", 1);
	reopen_rocks();
	expect_value("kept", 4, "value", 5);
	expect_value(bin, sizeof(bin), bin, sizeof(bin));
	expect_value("empty", 5, "", 0);
	expect_missing("deleted", 7);
	expect_missing("r1", 2);
	expect_missing("r2", 2);
	expect_scan("\x01", 1, NULL, 0,
	    (const char *[]) { "empty", "kept" }, 2);
	/* And it stays writable. */
	put("after", 5, "reopen", 6);
	reopen_rocks();
	expect_value("after", 5, "reopen", 6);
}

/*
 * A store written before the node's records had a family of their own
 * (everything in RocksDB's default family) opens with them moved over:
 * every key reads as before, the default family keeps none below the
 * seam, and the next open has nothing to move.
 */
Test(store, rocks_node_records_of_an_older_store_move_to_their_family)
{
	char *err = NULL;
	/* The older layout, written with RocksDB itself. */
	strcpy(dir, "/tmp/kv-store-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	rocksdb_options_t *o = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(o, 1);
	rocksdb_t *db = rocksdb_open(o, dir, &err);
	cr_assert_null(err, "%s", err);
	rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
	for (size_t i = 0; i < 7; i++) {
		rocksdb_put(db, wo, (const char *) SEAM_KEYS[i], SEAM_LENS[i],
		    "old", 3, &err);
		cr_assert_null(err, "%s", err);
	}
	rocksdb_close(db);

	reopen_rocks();
	for (size_t i = 0; i < 7; i++)
		expect_value(SEAM_KEYS[i], SEAM_LENS[i], "old", 3);
	expect_seam_scan(false, (const uint8_t *) "", 0, NULL, 0, 0, 0, 7);
	expect_seam_scan(true, (const uint8_t *) "", 0, NULL, 0, 0, 6, 7);
	put(N1, 5, "new", 3);
	reopen_rocks();
	expect_value(N1, 5, "new", 3);
	expect_value(N2, 5, "old", 3);
	store_close(S);
	S = NULL;

	/* Where they are now: the node's three in "node", none in default. */
	const char *names[] = { "default", "node" };
	const rocksdb_options_t *cfo[] = { o, o };
	rocksdb_column_family_handle_t *cf[2];
	db = rocksdb_open_column_families(o, dir, 2, names, cfo, cf, &err);
	cr_assert_null(err, "%s", err);
	size_t count[2] = { 0, 0 };
	for (int f = 0; f < 2; f++) {
		rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
		rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db, ro,
		    cf[f]);
		for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it);
		    rocksdb_iter_next(it)) {
			size_t kl;
			const uint8_t *k = (const uint8_t *) rocksdb_iter_key(it,
			    &kl);
			bool below = bytecmp(k, kl, T1, 4) < 0;
			cr_assert_eq(below, f == 1, "a key in the wrong family");
			count[f]++;
		}
		rocksdb_iter_destroy(it);
		rocksdb_readoptions_destroy(ro);
		rocksdb_column_family_handle_destroy(cf[f]);
	}
	rocksdb_close(db);
	cr_assert_eq(count[1], 3);
	cr_assert_eq(count[0], 4);
	rocksdb_writeoptions_destroy(wo);
	rocksdb_options_destroy(o);
}

/* A write left in the log buffer (store_write_buffered, no flush). */
static void
put_buffered(const char *k, const char *v)
{
	store_batch b;

	store_batch_init(&b);
	cr_assert_eq(badd(&b, STORE_PUT, k, strlen(k), v, strlen(v)), KV_OK);
	cr_assert_eq(store_write_buffered(S, &b), KV_OK);
	store_batch_fini(&b);
}

/*
 * The writer of rocks_kill_keeps_written_and_flushed_batches. It runs in a
 * process of its own, started by exec: a fork that went on running here
 * would inherit the test process's threads' locks (the sanitizers'
 * allocator among them) and could wait on one for ever. So the test
 * re-executes this binary with KV_STORE_KILL_CHILD naming the directory,
 * and main, below, does the writes before criterion starts, then kills
 * itself with SIGKILL so that nothing of it runs after its last call. Any
 * other end is an exit code the test reports. (Not a constructor: RocksDB
 * is linked in, and its static objects are built after this file's.)
 */
extern char **environ;

static int
put_raw(const char *k, const char *v, bool buffered)
{
	store_batch b;
	kv_err err;

	store_batch_init(&b);
	err = badd(&b, STORE_PUT, k, strlen(k), v, strlen(v));
	if (err == KV_OK)
		err = buffered ? store_write_buffered(S, &b) : store_write(S, &b);
	store_batch_fini(&b);
	return err == KV_OK ? 0 : -1;
}

static void
kill_child(void)
{
	const char *d = getenv("KV_STORE_KILL_CHILD");
	char why[256];
	uint8_t *v = NULL;
	size_t vl = 0;
	bool found = false;

	if (d == NULL)
		return;
	if (store_open_rocks(d, false, 0, &S, why, sizeof(why)) != KV_OK)
		_exit(3);
	if (put_raw("a-buffered", "1", true) != 0)
		_exit(7);
	/* Seen at once, before any flush. */
	if (store_get(S, (const uint8_t *) "a-buffered", 10, &v, &vl,
	    &found) != KV_OK || !found)
		_exit(4);
	free(v);
	if (store_flush(S) != KV_OK)
		_exit(5);
	if (put_raw("b-written", "2", false) != 0 ||
	    put_raw("c-unflushed", "3", true) != 0)
		_exit(7);
	raise(SIGKILL);
	_exit(6);
}

Test(store, rocks_kill_keeps_written_and_flushed_batches)
{
	/*
	 * What store_write returned, and what a store_flush after
	 * store_write_buffered covered, must be there after a SIGKILL.
	 */
	strcpy(dir, "/tmp/kv-store-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	/* The child's environment: this one's but criterion's sandbox
	 * variables (with them its start would take it for a worker of
	 * this process), and the directory. */
	size_t ne = 0, k = 0;
	while (environ[ne] != NULL)
		ne++;
	char **envp = calloc(ne + 2, sizeof(char *));
	char var[sizeof(dir) + 32];
	cr_assert_not_null(envp);
	snprintf(var, sizeof(var), "KV_STORE_KILL_CHILD=%s", dir);
	for (size_t i = 0; i < ne; i++)
		if (strncmp(environ[i], "BXFI_", 5) != 0)
			envp[k++] = environ[i];
	envp[k++] = var;
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		char *argv[] = { "store-kill-child", NULL };
		execve("/proc/self/exe", argv, envp);
		_exit(2);
	}
	free(envp);
	/* Bounded: a child that never ends is a failure, not a hang. */
	int st = 0;
	pid_t got = 0;
	for (int i = 0; i < 1200 && got == 0; i++) {
		got = waitpid(pid, &st, WNOHANG);
		if (got == 0)
			usleep(50 * 1000);
	}
	if (got == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		cr_assert_fail("the writing child did not end within 60 s");
	}
	cr_assert_eq(got, pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	    "child ended with status %d", st);
	char why[256] = "";
	cr_assert_eq(store_open_rocks(dir, false, 0, &S, why, sizeof(why)), KV_OK,
	    "%s", why);
	expect_value("a-buffered", 10, "1", 1);
	expect_value("b-written", 9, "2", 1);
	/* c-unflushed may or may not have reached the file: not asked. */
}

Test(store, rocks_flushes_leave_the_info_log_small)
{
	/*
	 * The server flushes the log once per read of requests. RocksDB's
	 * own LOG file must not take a line per flush: at DEBUG it did, and
	 * grew by about 1 MB a second under load.
	 */
	char path[128];
	struct stat st;

	open_engine(ENGINE_ROCKS);
	for (int i = 0; i < 20000; i++) {
		char k[32];
		snprintf(k, sizeof(k), "k%d", i % 100);
		put_buffered(k, "v");
		cr_assert_eq(store_flush(S), KV_OK);
	}
	store_close(S);
	S = NULL;
	snprintf(path, sizeof(path), "%s/LOG", dir);
	cr_assert_eq(stat(path, &st), 0);
	/* Opening and closing write about 20 KB: the options, the files. */
	cr_assert_lt(st.st_size, 200 * 1024, "LOG holds %lld bytes",
	    (long long) st.st_size);
}

Test(store, rocks_sync_store_round_trips)
{
	char why[256] = "";

	strcpy(dir, "/tmp/kv-store-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(store_open_rocks(dir, true, 0, &S, why, sizeof(why)), KV_OK,
	    "%s", why);
	put("k", 1, "v", 1);
	reopen_rocks();
	expect_value("k", 1, "v", 1);
}

Test(store, rocks_open_failure_is_io_with_reason)
{
	char why[256] = "";
	store *s = NULL;
	char path[128];

	/* A regular file where the directory should be. */
	strcpy(dir, "/tmp/kv-store-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(store_open_rocks(path, false, 0, &s, why, sizeof(why)),
	    KV_IO);
	cr_assert_null(s);
	cr_assert_neq(why[0], '\0', "the reason should be filled in");
}

/* criterion's own main, after the kill test's child (kill_child). */
int
main(int argc, char *argv[])
{
	kill_child();
	struct criterion_test_set *tests = criterion_initialize();
	int result = 0;
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
