/*
 * store_get.c — kv-store-get: what one point read of the node's RocksDB
 * store costs when the store holds ten million items, against ten
 * thousand, in one process: the store's share of ./kv bench --scale's
 * GetItem ratio, without the network, the router or the other nodes.
 *
 *   kv-store-get DIR [--items N] [--small N] [--memory-mb M]
 *                [--seconds S] [--rounds R] [--dist uniform|zipf:THETA]
 *                [--warm S] [--chase-mb C] [--reuse]
 *
 * Opens a store in DIR with the node's own options (store_open_rocks,
 * without sync, budget M, the node's default without it) and, unless
 * --reuse, loads two tables as kv-load --collections lays them out
 * through the cluster: item collections of ten sort keys (pk "k<rank>"
 * as S, sk 0..9 as N, storage keys from keyenc.h), 150-byte values, the
 * small table (--small, 10,000 items) first, then the big one (--items,
 * 10,000,000), in batches of 100 through store_write, in rank order (so
 * in hash order at random, as the cluster's load arrives). It then waits
 * until the store's compactions are done (the process under 5 % of a
 * core for two seconds).
 *
 * Then R rounds (5) of S seconds (2) of reads on each table, one thread,
 * the table read first alternating: store_get of sort key 0..9 (uniform)
 * under a collection drawn from --dist, every answer checked. Each round
 * prints both tables' nanoseconds per read and its ratio (big's reads/s
 * over small's); the last line has the medians:
 *
 *   store-get: small NS ns, big NS ns per read: ratio R (median of K)
 *
 * First, what the memory itself costs: a chain of dependent loads, one
 * 64-byte line each, through 1 MB and through C MB (1024; ns per load),
 * which is what a lookup pays for each line it touches outside the CPU's
 * caches.
 *
 * --warm S scans the big table once and then reads it for S seconds
 * before the rounds (0), so that a block cache that can hold it is
 * filled first; it prints what the cache then holds.
 *
 * --reuse opens DIR as a previous run left it and only reads, so options
 * that change only the read path can be compared on the same files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "keyenc.h"
#include "number.h"
#include "store.h"
#include "value.h"
#include "zipf.h"

#define PER_KEY 10        /* sort keys 0..9 in each collection */
#define VALUE_BYTES 150
#define LOAD_BATCH 100
#define KEY_MAX 64
#define SMALL_TABLE 2
#define BIG_TABLE 3
#define SETTLE_SHARE 0.05
#define SETTLE_LIMIT_S 900
#define ROUNDS_MAX 99

/* The process's CPU time so far, in seconds (its threads included). */
static double
cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double) ru.ru_utime.tv_sec + (double) ru.ru_stime.tv_sec +
	    ((double) ru.ru_utime.tv_usec + (double) ru.ru_stime.tv_usec) / 1e6;
}

/* The ten sort keys' encodings, made once. */
static uint8_t sk_enc[PER_KEY][KEY_MAX];
static size_t sk_len[PER_KEY];

static void
sort_keys_init(void)
{
	for (int i = 0; i < PER_KEY; i++) {
		number n;
		number_from_u64((uint64_t) i, &n);
		value v = { .type = VAL_N, .u.num = &n };
		sk_len[i] = keyenc_value(&v, sk_enc[i]);
	}
}

/* The storage key of item (rank, sk) of table tid in k; its length. */
static size_t
item_key(uint32_t tid, uint64_t rank, int sk, uint8_t *k)
{
	char pk[24];
	int m = snprintf(pk, sizeof(pk), "k%" PRIu64, rank);
	value v = { .type = VAL_S, .len = (size_t) m, .u.bytes = pk };
	size_t n = keyenc_collection(tid, -1, &v, k);
	memcpy(k + n, sk_enc[sk], sk_len[sk]);
	return n + sk_len[sk];
}

static int
load(store *st, uint32_t tid, uint64_t items, zipf_rng *rng)
{
	static uint8_t keys[LOAD_BATCH][KEY_MAX], vals[LOAD_BATCH][VALUE_BYTES];
	store_batch b;
	store_batch_init(&b);
	double t0 = clock_mono_s();
	for (uint64_t i = 0; i < items;) {
		b.n = 0;
		for (int j = 0; j < LOAD_BATCH && i < items; j++, i++) {
			size_t kl = item_key(tid, i / PER_KEY,
			    (int) (i % PER_KEY), keys[j]);
			for (size_t o = 0; o + 8 <= VALUE_BYTES; o += 8) {
				uint64_t x = zipf_rng_next(rng);
				memcpy(vals[j] + o, &x, 8);
			}
			if (store_batch_add(&b, STORE_PUT, keys[j], kl, vals[j],
			    VALUE_BYTES) != KV_OK) {
				fprintf(stderr, "kv-store-get: out of memory\n");
				store_batch_fini(&b);
				return -1;
			}
		}
		kv_err rv = store_write(st, &b);
		if (rv != KV_OK) {
			fprintf(stderr, "kv-store-get: write failed: %s\n",
			    kv_err_name(rv));
			store_batch_fini(&b);
			return -1;
		}
	}
	double secs = clock_mono_s() - t0;
	store_batch_fini(&b);
	printf("load: table %" PRIu32 ": %" PRIu64 " items in %.1f s "
	    "(%.0f items/s)\n", tid, items, secs,
	    secs > 0 ? (double) items / secs : 0.0);
	return 0;
}

/* Waits until the process is idle: the compactions the load left done. */
static void
settle(void)
{
	double t0 = clock_mono_s(), quiet_since = -1;
	for (;;) {
		double c0 = cpu_s(), w0 = clock_mono_s();
		sleep(1);
		double share = (cpu_s() - c0) / (clock_mono_s() - w0);
		if (share < SETTLE_SHARE) {
			if (quiet_since < 0)
				quiet_since = w0;
			else if (clock_mono_s() - quiet_since >= 2)
				break;
		} else {
			quiet_since = -1;
		}
		if (clock_mono_s() - t0 > SETTLE_LIMIT_S)
			break;
	}
	printf("settled after %.0f s\n", clock_mono_s() - t0);
}

/*
 * Reads table tid (ranks 0..keys-1 drawn from z) for secs seconds;
 * nanoseconds per read, or -1 when a read fails or finds nothing.
 */
static double
read_run(store *st, uint32_t tid, const zipf *z, zipf_rng *rng, double secs)
{
	uint8_t k[KEY_MAX];
	uint64_t reads = 0;
	double t0 = clock_mono_s(), t = t0;
	while (t - t0 < secs) {
		for (int i = 0; i < 256; i++) {
			uint64_t rank = zipf_next(z, rng);
			int sk = (int) zipf_rng_below(rng, PER_KEY);
			size_t kl = item_key(tid, rank, sk, k);
			uint8_t *v = NULL;
			size_t vl = 0;
			bool found = false;
			kv_err rv = store_get(st, k, kl, &v, &vl, &found);
			if (rv != KV_OK || !found || vl != VALUE_BYTES) {
				fprintf(stderr, "kv-store-get: table %" PRIu32
				    " rank %" PRIu64 " sk %d: %s\n", tid, rank,
				    sk, rv != KV_OK ? kv_err_name(rv) :
				    "not found or wrong size");
				free(v);
				return -1;
			}
			free(v);
		}
		reads += 256;
		t = clock_mono_s();
	}
	return (t - t0) * 1e9 / (double) reads;
}

static bool
count_item(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	(void) k, (void) kl, (void) v, (void) vl;
	(*(uint64_t *) arg)++;
	return true;
}

/* Scans table tid once, then reads it for secs seconds. 0 or -1. */
static int
warm_up(store *st, uint32_t tid, const zipf *z, zipf_rng *rng, double secs)
{
	uint8_t lo[4], hi[4];
	keyenc_table_prefix(tid, lo);
	keyenc_table_prefix(tid + 1, hi);
	uint64_t n = 0;
	double t0 = clock_mono_s();
	if (store_scan(st, lo, 4, hi, 4, count_item, &n) != KV_OK ||
	    read_run(st, tid, z, rng, secs) < 0)
		return -1;
	store_memory m;
	store_memory_of(st, &m);
	printf("warm: %" PRIu64 " items scanned and %.0f s of reads in "
	    "%.0f s; block cache %.0f of %.0f MB\n", n, secs,
	    clock_mono_s() - t0, (double) m.cache / (1 << 20),
	    (double) m.cache_capacity / (1 << 20));
	fflush(stdout);
	return 0;
}

/*
 * Nanoseconds per load of a chain of dependent loads through bytes of
 * memory, one 64-byte line each, in a random cyclic order.
 */
static double
chase(size_t bytes)
{
	size_t lines = bytes / 64;
	uint64_t *mem = aligned_alloc(64, lines * 64);
	size_t *order = malloc(lines * sizeof(*order));
	if (mem == NULL || order == NULL) {
		free(mem);
		free(order);
		return -1;
	}
	zipf_rng rng;
	zipf_rng_seed(&rng, 7);
	for (size_t i = 0; i < lines; i++)
		order[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t) zipf_rng_below(&rng, i + 1);
		size_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		mem[order[i] * 8] = order[(i + 1) % lines] * 8;
	free(order);
	uint64_t at = 0, steps = 4000000;
	double t0 = clock_mono_s();
	for (uint64_t i = 0; i < steps; i++)
		at = mem[at];
	double ns = (clock_mono_s() - t0) * 1e9 / (double) steps;
	/* at is used so that the loop is not taken away. */
	if (at == UINT64_MAX)
		ns = -1;
	free(mem);
	return ns;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
usage(void)
{
	fprintf(stderr, "usage: kv-store-get DIR [--items N] [--small N] "
	    "[--memory-mb M] [--seconds S] [--rounds R] "
	    "[--dist uniform|zipf:THETA] [--warm S] [--chase-mb C] "
	    "[--reuse]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL, *dist = "uniform";
	uint64_t items = 10000000, small = 10000;
	uint32_t memory_mb = 0, chase_mb = 1024;
	double secs = 2, warm = 0;
	int rounds = 5;
	bool reuse = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reuse") == 0)
			reuse = true;
		else if (i + 1 < argc && strcmp(argv[i], "--items") == 0)
			items = strtoull(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--small") == 0)
			small = strtoull(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--memory-mb") == 0)
			memory_mb = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0)
			secs = strtod(argv[++i], NULL);
		else if (i + 1 < argc && strcmp(argv[i], "--chase-mb") == 0)
			chase_mb = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--warm") == 0)
			warm = strtod(argv[++i], NULL);
		else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0)
			rounds = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--dist") == 0)
			dist = argv[++i];
		else if (argv[i][0] != '-' && dir == NULL)
			dir = argv[i];
		else
			return usage();
	}
	if (dir == NULL || items < PER_KEY || small < PER_KEY ||
	    !(secs > 0) || rounds < 1 || rounds > ROUNDS_MAX || chase_mb < 2)
		return usage();
	zipf zs, zb;
	if (zipf_parse(&zs, dist, small / PER_KEY) != KV_OK ||
	    zipf_parse(&zb, dist, items / PER_KEY) != KV_OK)
		return usage();
	sort_keys_init();

	printf("memory: a dependent load through 1 MB: %.1f ns, "
	    "through %" PRIu32 " MB: %.1f ns\n", chase((size_t) 1 << 20),
	    chase_mb, chase((size_t) chase_mb << 20));
	char why[256];
	store *st = NULL;
	if (store_open_rocks(dir, false, memory_mb, &st, why, sizeof(why)) !=
	    KV_OK) {
		fprintf(stderr, "kv-store-get: %s\n", why);
		return 1;
	}
	zipf_rng rng;
	zipf_rng_seed(&rng, 42);
	if (!reuse && (load(st, SMALL_TABLE, small, &rng) != 0 ||
	    load(st, BIG_TABLE, items, &rng) != 0)) {
		store_close(st);
		return 1;
	}
	settle();
	if (warm > 0 && warm_up(st, BIG_TABLE, &zb, &rng, warm) != 0) {
		store_close(st);
		return 1;
	}

	double ns_small[ROUNDS_MAX], ns_big[ROUNDS_MAX], ratio[ROUNDS_MAX];
	for (int r = 0; r < rounds; r++) {
		bool big_first = r % 2 == 1;
		double a = read_run(st, big_first ? BIG_TABLE : SMALL_TABLE,
		    big_first ? &zb : &zs, &rng, secs);
		double b = a < 0 ? -1 : read_run(st, big_first ? SMALL_TABLE :
		    BIG_TABLE, big_first ? &zs : &zb, &rng, secs);
		if (a < 0 || b < 0) {
			store_close(st);
			return 1;
		}
		ns_big[r] = big_first ? a : b;
		ns_small[r] = big_first ? b : a;
		ratio[r] = ns_small[r] / ns_big[r];
		printf("round %d: small %.0f ns, big %.0f ns per read: "
		    "ratio %.2f\n", r + 1, ns_small[r], ns_big[r], ratio[r]);
		fflush(stdout);
	}
	store_close(st);
	printf("store-get: small %.0f ns, big %.0f ns per read: ratio %.2f "
	    "(median of %d, %s)\n", median(ns_small, rounds),
	    median(ns_big, rounds), median(ratio, rounds), rounds, dist);
	return 0;
}
