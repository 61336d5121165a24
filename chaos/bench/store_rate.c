/*
 * store_rate.c — kv-store-rate: how fast the node's RocksDB store takes
 * writes on this machine, the baseline of ./kv bench --move's copy rate.
 *
 *   kv-store-rate DIR [--mb N] [--value-size B] [--batch-kb K] [--sync]
 *
 * Opens a fresh store in DIR with the node's own options (store.h,
 * store_open_rocks; without --sync as kv-node runs by default) and writes
 * N MB (default 1024) of B-byte records (default 4000) in batches of about
 * K KB (default 1024, the move's chunk), each with store_write (in the
 * write-ahead log before it returns), keys in ascending order under one
 * table prefix as a move's copy writes them. Prints one line:
 *
 *   store-rate: MB MB in SECS s: RATE MB/s (RECORDS records of B bytes,
 *   BATCHES batches)
 *
 * MB counts keys and values (what a move's chunk counts), in MiB.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "store.h"

static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A storage key like an item's: table id, hash, "S" "k<i>" 0x00 0x01. */
static size_t
make_key(uint8_t *k, uint64_t i, uint64_t n)
{
	uint64_t h = i * (UINT64_MAX / (n + 1));
	k[0] = 0, k[1] = 0, k[2] = 0, k[3] = 1;
	for (int b = 0; b < 8; b++)
		k[4 + b] = (uint8_t) (h >> (56 - 8 * b));
	int m = snprintf((char *) k + 12, 32, "Sk%" PRIu64, i);
	k[12 + m] = 0x00;
	k[13 + m] = 0x01;
	return 14 + (size_t) m;
}

static int
usage(void)
{
	fprintf(stderr, "usage: kv-store-rate DIR [--mb N] [--value-size B] "
	    "[--batch-kb K] [--sync]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL;
	uint64_t mb = 1024, vsize = 4000, batch_kb = 1024;
	bool sync = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sync") == 0)
			sync = true;
		else if (i + 1 < argc && strcmp(argv[i], "--mb") == 0)
			mb = strtoull(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--value-size") == 0)
			vsize = strtoull(argv[++i], NULL, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--batch-kb") == 0)
			batch_kb = strtoull(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && dir == NULL)
			dir = argv[i];
		else
			return usage();
	}
	if (dir == NULL || mb == 0 || vsize == 0 || batch_kb == 0)
		return usage();

	char why[256];
	store *st = NULL;
	if (store_open_rocks(dir, sync, 0, &st, why, sizeof(why)) != KV_OK) {
		fprintf(stderr, "kv-store-rate: %s\n", why);
		return 1;
	}
	/* One key length is about 24 bytes: estimate n from it. */
	uint64_t total = mb << 20, n = total / (vsize + 24) + 1;
	uint64_t per_batch = (batch_kb << 10) / (vsize + 24);
	if (per_batch == 0)
		per_batch = 1;
	uint8_t *vals = malloc(per_batch * vsize);
	uint8_t *keys = malloc(per_batch * 48);
	if (vals == NULL || keys == NULL) {
		fprintf(stderr, "kv-store-rate: out of memory\n");
		return 1;
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	store_batch b;
	store_batch_init(&b);
	uint64_t written = 0, records = 0, batches = 0;
	double t0 = clock_mono_s();
	while (written < total) {
		b.n = 0;
		for (uint64_t j = 0; j < per_batch && written < total; j++) {
			uint8_t *k = keys + j * 48, *v = vals + j * vsize;
			size_t kl = make_key(k, records, n);
			/* Fresh bytes in every record: nothing to compress. */
			for (uint64_t o = 0; o + 8 <= vsize; o += 8) {
				uint64_t x = next_rand(&seed);
				memcpy(v + o, &x, 8);
			}
			if (store_batch_add(&b, STORE_PUT, k, kl, v, vsize) !=
			    KV_OK) {
				fprintf(stderr, "kv-store-rate: out of memory\n");
				return 1;
			}
			written += kl + vsize;
			records++;
		}
		kv_err rv = store_write(st, &b);
		if (rv != KV_OK) {
			fprintf(stderr, "kv-store-rate: write failed: %s\n",
			    kv_err_name(rv));
			return 1;
		}
		batches++;
	}
	double secs = clock_mono_s() - t0;
	store_batch_fini(&b);
	store_close(st);
	free(vals);
	free(keys);
	double m = (double) written / (1 << 20);
	printf("store-rate: %.1f MB in %.3f s: %.1f MB/s (%" PRIu64
	    " records of %" PRIu64 " bytes, %" PRIu64 " batches%s)\n", m,
	    secs, secs > 0 ? m / secs : 0.0, records, vsize, batches,
	    sync ? ", fsync each" : "");
	return 0;
}
