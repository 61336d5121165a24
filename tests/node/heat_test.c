/*
 * heat_test.c — a partition's heat (node/adaptive/heat.c) without a node: the
 * top-k sketch heat_note keeps (totals, one entry per partition-key hash,
 * the space-saving bounds against a stream with many more keys than
 * entries, halving every HEAT_DECAY_S on an explicit clock), the cuts
 * heat_cuts chooses (a hot item cut out alone, the middle of an even
 * spread, the balance point between heavy keys, no cut of a single hash,
 * and every cut inside (lo, last] and increasing on random sketches),
 * and the key text people read (S, N, B).
 *
 * Sketches for heat_cuts are written by hand, so that hashes are known;
 * heat_note's are fed real storage keys (keyenc_item_key, table 1).
 * Two tests, marked BUG, fail against heat.c as of b181e98.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"
#include "keyenc.h"
#include "number.h"
#include "value.h"

#define T0 1000 /* any second but 0: 0 means "never decayed" */

/* xorshift64*, seeded per test so that a failure repeats. */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* ---- storage keys ---- */

typedef struct skey {
	uint8_t *k; /* owned: free() */
	size_t kl;
	uint64_t h;
} skey;

static skey
key_of(const value *pk, const value *sk)
{
	skey s;
	cr_assert_eq(keyenc_item_key(1, pk, sk, &s.k, &s.kl), KV_OK);
	s.h = keyenc_key_hash(s.k);
	cr_assert_eq(s.h, keyenc_hash(pk));
	return s;
}

static value
bytes_value(val_type t, const void *p, size_t len)
{
	value v;
	memset(&v, 0, sizeof(v));
	v.type = t;
	v.len = len;
	v.u.bytes = p;
	return v;
}

/* The storage key of an item of table 1 with S partition key s. */
static skey
s_key(const char *s)
{
	value pk = bytes_value(VAL_S, s, strlen(s));
	return key_of(&pk, NULL);
}

static value
n_value(number *storage, const char *text)
{
	const char *msg;
	value v;
	cr_assert_eq(number_parse(text, strlen(text), storage, &msg), KV_OK);
	memset(&v, 0, sizeof(v));
	v.type = VAL_N;
	v.u.num = storage;
	return v;
}

/* The sketch's entry for hash h, or NULL. */
static const heat_key *
entry(const heat *ht, uint64_t h)
{
	for (size_t i = 0; i < ht->n; i++)
		if (ht->top[i].h == h)
			return &ht->top[i];
	return NULL;
}

/* ---- heat_note ---- */

Test(heat, note_counts_totals_and_the_key)
{
	heat ht = { 0 };
	skey a = s_key("PROD#1");

	heat_note(&ht, a.k, a.kl, true, 6, false, false, T0);
	heat_note(&ht, a.k, a.kl, false, 3, false, false, T0);
	heat_note(&ht, a.k, a.kl, true, 0, true, false, T0);
	cr_assert_eq(ht.wr, 6);
	cr_assert_eq(ht.rd, 3);
	cr_assert_eq(ht.throttled, 1);
	cr_assert_eq(ht.n, 1, "one entry per partition-key hash");
	const heat_key *e = entry(&ht, a.h);
	cr_assert_not_null(e);
	cr_assert_eq(e->wr, 6);
	cr_assert_eq(e->rd, 3);
	cr_assert_eq(e->throttled, 1);
	cr_assert_eq(e->weight, 6 + 3 + 2, "units plus 2 per throttled");
	cr_assert_eq(e->err, 0);
	free(a.k);
}

Test(heat, note_keeps_one_entry_per_hash_across_sort_keys)
{
	heat ht = { 0 };
	value pk = bytes_value(VAL_S, "ORDER#7", 7);
	value s1 = bytes_value(VAL_S, "LINE#1", 6);
	value s2 = bytes_value(VAL_S, "LINE#2", 6);
	skey a = key_of(&pk, &s1), b = key_of(&pk, &s2);
	char t[64];

	heat_note(&ht, a.k, a.kl, true, 2, false, false, T0);
	heat_note(&ht, b.k, b.kl, true, 4, false, false, T0);
	cr_assert_eq(ht.n, 1);
	cr_assert_eq(ht.top[0].h, a.h);
	cr_assert_eq(ht.top[0].wr, 6);
	heat_key_text(&ht.top[0], t, sizeof(t));
	cr_assert_str_eq(t, "S:ORDER#7", "the partition key, not the sort key");
	free(a.k);
	free(b.k);
}

Test(heat, note_without_a_key_counts_the_totals_only)
{
	heat ht = { 0 };
	uint8_t prefix[KEYENC_PREFIX] = { 0, 0, 0, 1 };

	heat_note(&ht, NULL, 0, true, 5, false, false, T0);
	heat_note(&ht, prefix, sizeof(prefix), false, 7, true, false, T0);
	cr_assert_eq(ht.wr, 5);
	cr_assert_eq(ht.rd, 7);
	cr_assert_eq(ht.throttled, 1);
	cr_assert_eq(ht.n, 0, "a bare prefix names no key");
}

Test(heat, note_fills_one_entry_per_key_up_to_topk)
{
	heat ht = { 0 };
	for (int i = 0; i < HEAT_TOPK; i++) {
		char name[16];
		snprintf(name, sizeof(name), "k%d", i);
		skey k = s_key(name);
		heat_note(&ht, k.k, k.kl, true, 1 + (uint64_t) i, false, false, T0);
		cr_assert_eq(ht.n, (size_t) i + 1);
		cr_assert_not_null(entry(&ht, k.h));
		cr_assert_eq(entry(&ht, k.h)->err, 0, "no eviction yet");
		free(k.k);
	}
}

Test(heat, note_evicts_the_lightest_and_carries_its_weight_as_err)
{
	heat ht = { 0 };
	skey keys[HEAT_TOPK];
	for (int i = 0; i < HEAT_TOPK; i++) {
		char name[16];
		snprintf(name, sizeof(name), "k%d", i);
		keys[i] = s_key(name);
		/* k3 is the lightest (weight 2); the rest weigh 10. */
		heat_note(&ht, keys[i].k, keys[i].kl, true, i == 3 ? 2 : 10,
		    false, false, T0);
	}
	skey late = s_key("late");
	heat_note(&ht, late.k, late.kl, false, 1, false, false, T0);
	cr_assert_eq(ht.n, HEAT_TOPK);
	cr_assert_null(entry(&ht, keys[3].h), "the lightest made way");
	const heat_key *e = entry(&ht, late.h);
	cr_assert_not_null(e);
	cr_assert_eq(e->weight, 2 + 1);
	cr_assert_eq(e->err, 2);
	cr_assert_eq(e->rd, 1, "its own units only");
	cr_assert_eq(e->wr, 0, "the evicted key's units are not its");
	char t[64];
	heat_key_text(e, t, sizeof(t));
	cr_assert_str_eq(t, "S:late");
	for (int i = 0; i < HEAT_TOPK; i++)
		free(keys[i].k);
	free(late.k);
}

/*
 * A stream of notes over NKEYS keys whose true weights the test keeps,
 * so that stream_check can hold the sketch to space-saving's promises.
 */
#define NKEYS 400

typedef struct stream {
	skey keys[NKEYS];
	uint64_t truth[NKEYS];
	uint64_t total;
	heat ht;
} stream;

static void
stream_init(stream *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < NKEYS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "user#%d", i);
		s->keys[i] = s_key(name);
	}
}

static void
stream_note(stream *s, int i, uint64_t half_units, bool throttled)
{
	heat_note(&s->ht, s->keys[i].k, s->keys[i].kl, (i & 1) != 0,
	    half_units, throttled, false, T0);
	s->truth[i] += half_units + (throttled ? 2 : 0);
	s->total += half_units + (throttled ? 2 : 0);
}

static void
stream_check(stream *s)
{
	cr_assert_eq(s->ht.n, HEAT_TOPK);
	for (size_t e = 0; e < s->ht.n; e++) {
		const heat_key *k = &s->ht.top[e];
		int i = -1;
		for (int j = 0; j < NKEYS; j++)
			if (s->keys[j].h == k->h)
				i = j;
		cr_assert_geq(i, 0, "entry %zu is no key of the stream", e);
		cr_assert_leq(k->weight - k->err, s->truth[i],
		    "user#%d: weight %lu - err %lu above its true %lu", i,
		    (unsigned long) k->weight, (unsigned long) k->err,
		    (unsigned long) s->truth[i]);
		cr_assert_geq(k->weight, s->truth[i],
		    "user#%d: weight %lu below its true %lu", i,
		    (unsigned long) k->weight, (unsigned long) s->truth[i]);
	}
	for (int i = 0; i < NKEYS; i++)
		if (s->truth[i] * HEAT_TOPK > s->total)
			cr_assert_not_null(entry(&s->ht, s->keys[i].h),
			    "user#%d holds %lu of %lu and is missing", i,
			    (unsigned long) s->truth[i],
			    (unsigned long) s->total);
}

static void
stream_fini(stream *s)
{
	for (int i = 0; i < NKEYS; i++)
		free(s->keys[i].k);
}

static stream S; /* 20 KB: not on the stack */

Test(heat, space_saving_bounds_on_a_random_stream)
{
	stream_init(&S);
	rng_state = 0x5eed0001;
	/* Key 0 takes ~15 %, key 1 ~8 %, the rest spread over 398 keys. */
	for (int n = 0; n < 20000; n++) {
		uint64_t r = rng() % 100;
		int i = r < 15 ? 0 : r < 23 ? 1 :
		    2 + (int) (rng() % (NKEYS - 2));
		stream_note(&S, i, 1 + rng() % 4, rng() % 10 == 0);
	}
	cr_assert_gt(S.truth[1] * HEAT_TOPK, S.total, "key 1 is above 1/k");
	stream_check(&S);
	stream_fini(&S);
}

Test(heat, space_saving_keeps_a_heavy_key_that_arrives_last)
{
	stream_init(&S);
	/* 399 keys once each, then key 0 alone: 100 of 499 (20 %). */
	for (int i = 1; i < NKEYS; i++)
		stream_note(&S, i, 1, false);
	for (int n = 0; n < 100; n++)
		stream_note(&S, 0, 1, false);
	stream_check(&S);
	cr_assert_not_null(entry(&S.ht, S.keys[0].h));
	stream_fini(&S);
}

Test(heat, space_saving_keeps_a_heavy_key_that_arrives_first)
{
	stream_init(&S);
	/* Key 0 first (40 half units), then 399 keys once: 40 of 439. */
	stream_note(&S, 0, 40, false);
	for (int i = 1; i < NKEYS; i++)
		stream_note(&S, i, 1, false);
	stream_check(&S);
	const heat_key *e = entry(&S.ht, S.keys[0].h);
	cr_assert_not_null(e);
	cr_assert_eq(e->err, 0, "never evicted, so counted exactly");
	cr_assert_eq(e->weight, 40);
	stream_fini(&S);
}

/* ---- decay ---- */

Test(heat, counts_halve_after_decay_seconds)
{
	heat ht = { 0 };
	skey a = s_key("PROD#1");

	heat_note(&ht, a.k, a.kl, true, 100, false, false, T0);
	heat_note(&ht, a.k, a.kl, false, 40, true, false, T0);
	/* Just before: nothing changes. */
	heat_note(&ht, NULL, 0, true, 0, false, false, T0 + HEAT_DECAY_S - 1);
	cr_assert_eq(ht.wr, 100);
	cr_assert_eq(ht.rd, 40);
	heat_note(&ht, NULL, 0, true, 0, false, false, T0 + HEAT_DECAY_S);
	cr_assert_eq(ht.wr, 50);
	cr_assert_eq(ht.rd, 20);
	cr_assert_eq(ht.throttled, 0, "1 / 2");
	const heat_key *e = entry(&ht, a.h);
	cr_assert_not_null(e);
	cr_assert_eq(e->wr, 50);
	cr_assert_eq(e->rd, 20);
	cr_assert_eq(e->weight, 71, "(100 + 40 + 2) / 2");
	cr_assert_eq(e->throttled, 0);
	free(a.k);
}

Test(heat, decay_halves_once_per_period_missed)
{
	heat ht = { 0 };
	skey a = s_key("PROD#1");

	heat_note(&ht, a.k, a.kl, true, 800, false, false, T0);
	/* 2.5 periods: two halvings, the half period still counts on. */
	heat_note(&ht, NULL, 0, true, 0, false, false, T0 + 5 * HEAT_DECAY_S / 2);
	cr_assert_eq(ht.wr, 200);
	cr_assert_eq(entry(&ht, a.h)->wr, 200);
	heat_note(&ht, NULL, 0, true, 0, false, false, T0 + 3 * HEAT_DECAY_S - 1);
	cr_assert_eq(ht.wr, 200);
	heat_note(&ht, NULL, 0, true, 0, false, false, T0 + 3 * HEAT_DECAY_S);
	cr_assert_eq(ht.wr, 100);
	cr_assert_eq(entry(&ht, a.h)->weight, 100);
	free(a.k);
}

Test(heat, decay_to_nothing_empties_the_sketch)
{
	heat ht = { 0 };
	skey a = s_key("PROD#1"), b = s_key("PROD#2");

	heat_note(&ht, a.k, a.kl, true, 3, false, false, T0);
	/* A long quiet (a year): quick, and the sketch starts over. */
	heat_note(&ht, NULL, 0, true, 0, false, false, T0 + 365LL * 86400);
	cr_assert_eq(ht.wr, 0);
	cr_assert_eq(ht.n, 0);
	heat_note(&ht, b.k, b.kl, true, 2, false, false, T0 + 365LL * 86400 + 1);
	cr_assert_eq(ht.n, 1);
	cr_assert_eq(ht.top[0].h, b.h);
	cr_assert_eq(ht.top[0].err, 0);
	free(a.k);
	free(b.k);
}

/* ---- heat_cuts ---- */

/* put adds a hand-made entry at hash h with wr and rd half units. */
static void
put(heat *ht, uint64_t h, uint64_t wr, uint64_t rd)
{
	cr_assert_lt(ht->n, HEAT_TOPK);
	heat_key *k = &ht->top[ht->n++];
	memset(k, 0, sizeof(*k));
	k->h = h;
	k->wr = wr;
	k->rd = rd;
	k->weight = wr + rd;
}

/* cuts calls heat_cuts and checks what every answer must satisfy. */
static size_t
cuts(const heat *ht, uint64_t lo, uint64_t last, bool write, uint64_t c[2],
    bool *item)
{
	c[0] = c[1] = 0xdeadbeef;
	size_t n = heat_cuts(ht, lo, last, write, c, item);
	cr_assert_leq(n, 2);
	for (size_t i = 0; i < n; i++) {
		cr_assert_gt(c[i], lo, "cut %zu: %lx not above lo %lx", i,
		    (unsigned long) c[i], (unsigned long) lo);
		cr_assert_leq(c[i], last, "cut %zu: %lx past last %lx", i,
		    (unsigned long) c[i], (unsigned long) last);
		if (i > 0)
			cr_assert_gt(c[i], c[i - 1], "cuts not increasing");
	}
	return n;
}

#define LO 0x1000000000000000ULL
#define LAST 0x1fffffffffffffffULL
#define MID (LO + (LAST - LO) / 2)

/* Within 1 % of the range of where it should be. */
static void
near(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;
	cr_assert_leq(d, (LAST - LO) / 100, "cut %lx, want about %lx",
	    (unsigned long) got, (unsigned long) want);
}

Test(heat, cuts_hot_item_out_alone)
{
	heat ht = { 0 };
	uint64_t c[2], h = LO + 0x123456789ULL;
	bool item;

	ht.wr = 1000;
	put(&ht, h, 600, 0);
	put(&ht, LO + 0x10, 100, 0);
	put(&ht, LAST - 0x10, 100, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 2);
	cr_assert(item);
	cr_assert_eq(c[0], h, "the item starts a partition");
	cr_assert_eq(c[1], h + 1, "and is alone in it");
}

Test(heat, cuts_hot_item_at_exactly_half)
{
	heat ht = { 0 };
	uint64_t c[2], h = MID + 77;
	bool item;

	ht.wr = 1000;
	put(&ht, h, 500, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 2);
	cr_assert(item);
	cr_assert_eq(c[0], h);
	cr_assert_eq(c[1], h + 1);
}

Test(heat, cuts_hot_item_at_lo_once)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 100;
	put(&ht, LO, 90, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert(item);
	cr_assert_eq(c[0], LO + 1);
}

Test(heat, cuts_hot_item_at_last_once)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 100;
	put(&ht, LAST, 90, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert(item);
	cr_assert_eq(c[0], LAST);
}

Test(heat, cuts_hot_item_in_the_whole_hash_space)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 10;
	put(&ht, UINT64_MAX, 9, 0);
	cr_assert_eq(cuts(&ht, 0, UINT64_MAX, true, c, &item), 1);
	cr_assert(item);
	cr_assert_eq(c[0], UINT64_MAX);
	ht.n = 0;
	put(&ht, 0, 9, 0);
	cr_assert_eq(cuts(&ht, 0, UINT64_MAX, true, c, &item), 1);
	cr_assert_eq(c[0], 1);
}

Test(heat, cuts_hot_item_fed_by_heat_note)
{
	heat ht = { 0 };
	skey hot = s_key("CELEBRITY#1");
	uint64_t c[2];
	bool item;

	for (int i = 0; i < 50; i++) {
		char name[16];
		snprintf(name, sizeof(name), "fan#%d", i);
		skey k = s_key(name);
		heat_note(&ht, k.k, k.kl, true, 2, false, false, T0);
		heat_note(&ht, hot.k, hot.kl, true, 4, false, false, T0);
		free(k.k);
	}
	/* 200 of 300 half units on one key; its hash is not 0 or ~0. */
	cr_assert(hot.h != 0 && hot.h != UINT64_MAX);
	cr_assert_eq(cuts(&ht, 0, UINT64_MAX, true, c, &item), 2);
	cr_assert(item);
	cr_assert_eq(c[0], hot.h);
	cr_assert_eq(c[1], hot.h + 1);
	free(hot.k);
}

Test(heat, cuts_ignore_a_key_outside_the_range)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 1000;
	put(&ht, LO - 1, 900, 0); /* left over from before an earlier split */
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	near(c[0], MID);
}

Test(heat, cuts_uniform_spread_in_the_middle)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 10000; /* none of it in the sketch */
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	near(c[0], MID);
}

Test(heat, cuts_many_small_keys_spread_evenly_in_the_middle)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	/* 16 keys of 5 % each at even steps, and 20 % outside the sketch. */
	ht.wr = 2000;
	for (int i = 0; i < HEAT_TOPK; i++)
		put(&ht, LO + (LAST - LO) / HEAT_TOPK * (uint64_t) i +
		    (LAST - LO) / (2 * HEAT_TOPK), 100, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	near(c[0], MID);
}

Test(heat, cuts_the_whole_hash_space_in_the_middle)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.rd = 5000;
	cr_assert_eq(cuts(&ht, 0, UINT64_MAX, false, c, &item), 1);
	cr_assert_not(item);
	uint64_t d = c[0] > (1ULL << 63) ? c[0] - (1ULL << 63) :
	    (1ULL << 63) - c[0];
	cr_assert_leq(d, UINT64_MAX / 100);
}

Test(heat, cuts_without_traffic_in_the_middle)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	cr_assert_eq(c[0], MID + 1);
}

/*
 * Two heavy keys, 45 % each, and 10 % spread evenly: the left side holds
 * 45 % plus the spread below the cut, so halves meet where that spread
 * is 5 %, halfway along the range, between the keys.
 */
Test(heat, cuts_between_two_heavy_keys)
{
	heat ht = { 0 };
	uint64_t c[2];
	uint64_t a = LO + (LAST - LO) / 5, b = LO + (LAST - LO) / 5 * 4;
	bool item;

	ht.wr = 1000;
	put(&ht, a, 450, 0);
	put(&ht, b, 450, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	cr_assert_gt(c[0], a, "the first key on the left");
	cr_assert_leq(c[0], b, "the second on the right");
	near(c[0], MID);
}

/* The same with the keys close together: the cut is still between. */
Test(heat, cuts_between_two_heavy_neighbours)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 1000;
	put(&ht, LO + 100, 480, 0);
	put(&ht, LO + 200, 480, 0);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	cr_assert_gt(c[0], LO + 100);
	cr_assert_leq(c[0], LO + 200);
}

/*
 * 20 %, 35 % and 35 % at three hashes, 10 % spread: no cut gives a half
 * exactly; the best one leaves 55 % (plus a little spread) on the left:
 * just after the middle key.
 */
Test(heat, cuts_just_after_the_key_that_tips_the_balance)
{
	heat ht = { 0 };
	uint64_t c[2];
	uint64_t h1 = LO + 1000, h2 = LO + 2000, h3 = LAST - 1000;
	bool item;

	ht.wr = 1000;
	put(&ht, h3, 350, 0);
	put(&ht, h1, 200, 0);
	put(&ht, h2, 350, 0); /* the sketch is in no order */
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 1);
	cr_assert_not(item);
	cr_assert_eq(c[0], h2 + 1);
}

Test(heat, cuts_of_a_single_hash_are_none)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item = true;

	ht.wr = 100;
	put(&ht, LO, 100, 0);
	cr_assert_eq(cuts(&ht, LO, LO, true, c, &item), 0);
	cr_assert_not(item);
	cr_assert_eq(cuts(&ht, UINT64_MAX, UINT64_MAX, true, c, &item), 0);
	cr_assert_eq(cuts(&ht, 0, 0, false, c, &item), 0);
}

Test(heat, cuts_of_two_hashes_split_them)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 100;
	put(&ht, LO, 50, 0);
	put(&ht, LO + 1, 50, 0);
	cr_assert_eq(cuts(&ht, LO, LO + 1, true, c, &item), 1);
	cr_assert_eq(c[0], LO + 1);
	ht.n = 0;
	cr_assert_eq(cuts(&ht, LO, LO + 1, true, c, &item), 1);
	cr_assert_eq(c[0], LO + 1);
}

Test(heat, cuts_read_dimension_uses_reads)
{
	heat ht = { 0 };
	uint64_t c[2], hr = LO + 0x5000, hw = LAST - 0x5000;
	bool item;

	/* hr is hot for reads, hw for writes. */
	ht.rd = 1000;
	ht.wr = 1000;
	put(&ht, hr, 10, 800);
	put(&ht, hw, 800, 10);
	cr_assert_eq(cuts(&ht, LO, LAST, false, c, &item), 2);
	cr_assert(item);
	cr_assert_eq(c[0], hr);
	cr_assert_eq(c[1], hr + 1);
	cr_assert_eq(cuts(&ht, LO, LAST, true, c, &item), 2);
	cr_assert(item);
	cr_assert_eq(c[0], hw);
	cr_assert_eq(c[1], hw + 1);
}

Test(heat, cuts_read_dimension_ignores_writes)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	/* All the writes on one key, reads spread evenly. */
	ht.rd = 1000;
	ht.wr = 1000;
	put(&ht, LO + 5, 0, 1000 / 100);
	ht.top[0].wr = 1000;
	cr_assert_eq(cuts(&ht, LO, LAST, false, c, &item), 1);
	cr_assert_not(item);
	near(c[0], MID);
}

/* Random sketches and ranges: every answer keeps the contract. */
Test(heat, cuts_always_inside_the_range_and_increasing)
{
	rng_state = 0x5eed0002;
	for (int round = 0; round < 20000; round++) {
		heat ht = { 0 };
		uint64_t lo, last, c[2];
		bool item;
		switch (round % 4) {
		case 0: /* the whole space */
			lo = 0;
			last = UINT64_MAX;
			break;
		case 1: /* a tiny range */
			lo = rng();
			last = lo + rng() % 8;
			if (last < lo)
				last = UINT64_MAX;
			break;
		case 2: /* at the top end */
			lo = UINT64_MAX - rng() % 1000;
			last = UINT64_MAX;
			break;
		default:
			lo = rng();
			last = rng();
			if (last < lo) {
				uint64_t t = lo;
				lo = last;
				last = t;
			}
			break;
		}
		ht.rd = rng() % 3 == 0 ? 0 : rng() % 10000;
		ht.wr = rng() % 3 == 0 ? 0 : rng() % 10000;
		size_t n = (size_t) (rng() % (HEAT_TOPK + 1));
		for (size_t i = 0; i < n; i++) {
			uint64_t h;
			switch (rng() % 5) {
			case 0: h = lo; break;
			case 1: h = last; break;
			case 2: h = lo + (last - lo) / 2; break;
			case 3: h = rng(); break; /* often outside */
			default: {
				uint64_t w = last - lo + 1; /* 0: all of it */
				h = lo + (w == 0 ? rng() : rng() % w);
				break;
			}
			}
			if (entry(&ht, h) != NULL)
				continue;
			put(&ht, h, rng() % 3000, rng() % 3000);
		}
		bool write = rng() & 1;
		size_t got = cuts(&ht, lo, last, write, c, &item);
		if (lo == last)
			cr_assert_eq(got, 0, "round %d", round);
		else
			cr_assert_geq(got, 1, "round %d", round);
	}
}

/*
 * On ranges small enough to try every cut: without a hot item, the cut
 * chosen leaves on its left as close to half of the weight as the best
 * cut does (the keys as points, the rest spread evenly, as heat.h says),
 * give or take the spread of one hash.
 */
Test(heat, cuts_come_closest_to_half_on_small_ranges)
{
	rng_state = 0x5eed0003;
	for (int round = 0; round < 5000; round++) {
		heat ht = { 0 };
		uint64_t lo = rng() % 1000, last = lo + 1 + rng() % 40, c[2];
		bool item;
		long double inside = 0;
		size_t n = (size_t) (rng() % (HEAT_TOPK + 1));
		for (size_t i = 0; i < n; i++) {
			uint64_t h = lo + rng() % (last - lo + 1);
			if (entry(&ht, h) != NULL)
				continue;
			put(&ht, h, 1 + rng() % 100, 0);
			inside += ht.top[ht.n - 1].wr;
		}
		ht.wr = (uint64_t) inside + rng() % 300;
		if (ht.wr == 0)
			continue;
		size_t got_n = cuts(&ht, lo, last, true, c, &item);
		if (item)
			continue;
		cr_assert_eq(got_n, 1, "round %d", round);
		long double total = ht.wr, spread = total - inside;
		long double span = (long double) (last - lo + 1);
		long double best = -1, got = -1;
		for (uint64_t x = lo + 1; x <= last; x++) {
			long double left = spread * (long double) (x - lo) /
			    span;
			for (size_t i = 0; i < ht.n; i++)
				if (ht.top[i].h < x)
					left += ht.top[i].wr;
			long double gap = left > total / 2 ? left - total / 2 :
			    total / 2 - left;
			if (best < 0 || gap < best)
				best = gap;
			if (x == c[0])
				got = gap;
		}
		cr_assert_leq(got, best + spread / span + 1e-9L,
		    "round %d: cut %lu leaves %Lf off half, the best %Lf",
		    round, (unsigned long) c[0], got, best);
	}
}

/*
 * BUG (heat.c as of b181e98): between two keys heat_cuts tries the
 * balance point rounded down, never rounded up, so on a small range it
 * can miss "the one hash that best halves the weight" by one. Here the
 * left side holds 20 + 45 (c - 100) of 290: c = 102 leaves 110 (35 off
 * half), c = 103 leaves 155 (10 off), and heat_cuts answers 102. (On a
 * range of 2^60 hashes one hash is nothing, hence the tolerance above.)
 */
Test(heat, cuts_best_hash_on_a_tiny_range)
{
	heat ht = { 0 };
	uint64_t c[2];
	bool item;

	ht.wr = 290;
	put(&ht, 100, 20, 0);
	cr_assert_eq(cuts(&ht, 100, 105, true, c, &item), 1);
	cr_assert_not(item);
	cr_assert_eq(c[0], 103, "cut at %lu", (unsigned long) c[0]);
}

/* ---- heat_key_text ---- */

static heat_key
key_entry(const value *pk)
{
	heat ht = { 0 };
	skey k = key_of(pk, NULL);
	heat_note(&ht, k.k, k.kl, true, 1, false, false, T0);
	free(k.k);
	cr_assert_eq(ht.n, 1);
	return ht.top[0];
}

Test(heat, key_text_of_a_string)
{
	value pk = bytes_value(VAL_S, "PROD#1", 6);
	heat_key k = key_entry(&pk);
	char t[64];
	heat_key_text(&k, t, sizeof(t));
	cr_assert_str_eq(t, "S:PROD#1");
}

Test(heat, key_text_of_numbers)
{
	static const char *const in[] = { "12.5", "-3", "0", "1E+2",
		"0.001" };
	static const char *const want[] = { "N:12.5", "N:-3", "N:0", "N:100",
		"N:0.001" };
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		number num;
		value pk = n_value(&num, in[i]);
		heat_key k = key_entry(&pk);
		char t[64];
		heat_key_text(&k, t, sizeof(t));
		cr_assert_str_eq(t, want[i], "%s", in[i]);
	}
}

Test(heat, key_text_of_binary_is_hex)
{
	static const uint8_t b[] = { 0x00, 0x01, 0xab, 0xff, 0x00 };
	value pk = bytes_value(VAL_B, b, sizeof(b));
	heat_key k = key_entry(&pk);
	char t[64];
	heat_key_text(&k, t, sizeof(t));
	cr_assert_str_eq(t, "B:0001abff00", "escaped zeros read back");
}

Test(heat, key_text_keeps_quotes_and_controls_out)
{
	static const char s[] = "a\"b\\c\nd\0e";
	value pk = bytes_value(VAL_S, s, sizeof(s) - 1);
	heat_key k = key_entry(&pk);
	char t[64];
	heat_key_text(&k, t, sizeof(t));
	cr_assert_str_eq(t, "S:a?b?c?d?e");
}

Test(heat, key_text_of_a_long_key_is_cut_short)
{
	char s[100];
	memset(s, 'x', sizeof(s));
	value pk = bytes_value(VAL_S, s, sizeof(s));
	heat_key k = key_entry(&pk);
	cr_assert_eq(k.pk_len, HEAT_PK_MAX);
	char t[128], want[128];
	heat_key_text(&k, t, sizeof(t));
	/* The tag and HEAT_PK_MAX - 1 characters. */
	snprintf(want, sizeof(want), "S:%.*s", HEAT_PK_MAX - 1, s);
	cr_assert_str_eq(t, want);
}

/* Whether s is well-formed UTF-8 (no overlong or surrogate checks). */
static bool
utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *) s;
	while (*p != 0) {
		int more = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 :
		    (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : -1;
		if (more < 0)
			return false;
		p++;
		for (int i = 0; i < more; i++, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/*
 * BUG (heat.c as of b181e98): a string key is kept cut short at
 * HEAT_PK_MAX bytes, which can fall inside a character; heat_key_text
 * then ends the text with part of one. hot_keys_serve puts the text in
 * JSON as it is, and kv-admin hot-keys (json_loadb) refuses the whole
 * partition's answer as invalid UTF-8 and prints "not served there
 * yet"; the split event's hot_keys carry the same bytes. Here: 30 e-acute
 * (60 bytes); the 39 bytes kept end with a lone 0xC3.
 */
Test(heat, key_text_of_a_long_utf8_key_is_whole_characters)
{
	char s[61] = "";
	for (int i = 0; i < 30; i++)
		strcat(s, "\xc3\xa9");
	value pk = bytes_value(VAL_S, s, strlen(s));
	heat_key k = key_entry(&pk);
	char t[128];
	heat_key_text(&k, t, sizeof(t));
	cr_assert_eq(strncmp(t, "S:\xc3\xa9", 4), 0);
	cr_assert(utf8_ok(t), "not UTF-8: ends with %02x",
	    (unsigned char) t[strlen(t) - 1]);
}

Test(heat, key_text_fits_a_small_buffer)
{
	value pk = bytes_value(VAL_S, "PROD#123456", 11);
	heat_key k = key_entry(&pk);
	for (size_t len = 1; len < 20; len++) {
		char t[32];
		memset(t, '#', sizeof(t));
		heat_key_text(&k, t, len);
		cr_assert_lt(strlen(t), len, "len %zu", len);
		cr_assert_eq(strncmp(t, "S:PROD#123456", strlen(t)), 0,
		    "len %zu: %s", len, t);
		cr_assert_eq(t[len], '#', "len %zu: wrote past the end", len);
	}
	number num;
	value n = n_value(&num, "-123.456");
	k = key_entry(&n);
	char t[6];
	heat_key_text(&k, t, sizeof(t));
	cr_assert_str_eq(t, "N:-12");
}

Test(heat, key_text_of_no_key_is_empty)
{
	heat_key k;
	char t[8] = "junk";
	memset(&k, 0, sizeof(k));
	heat_key_text(&k, t, sizeof(t));
	cr_assert_str_eq(t, "");
}

/* ---- heat_key_cuts: splits on the sort key ---- */

/* A storage key of collection "hot", sort key sk (N); k.k is owned. */
static skey
sk_key(long sk)
{
	value pk = bytes_value(VAL_S, "hot", 3);
	char num[32];
	snprintf(num, sizeof(num), "%ld", sk);
	number nb;
	const char *msg;
	cr_assert_eq(number_parse(num, strlen(num), &nb, &msg), KV_OK);
	value v;
	memset(&v, 0, sizeof(v));
	v.type = VAL_N;
	v.u.num = &nb;
	skey k;
	cr_assert_eq(keyenc_item_key(1, &pk, &v, &k.k, &k.kl), KV_OK);
	return k;
}

Test(heat, key_cuts_leave_a_hot_item_alone)
{
	heat ht = { 0 };
	skey hot = sk_key(50);
	for (long i = 0; i < 10; i++) {
		skey k = sk_key(i);
		heat_note(&ht, k.k, k.kl, true, 2, false, true, T0);
		free(k.k);
	}
	heat_note(&ht, hot.k, hot.kl, true, 100, false, true, T0);
	uint8_t cut[2][HEAT_PK_MAX];
	size_t len[2];
	bool item;
	cr_assert_eq(heat_key_cuts(&ht, NULL, 0, NULL, 0, true, cut, len,
	    &item), 2);
	cr_assert(item);
	size_t sl = hot.kl - KEYENC_PREFIX;
	cr_assert_eq(len[0], sl);
	cr_assert_eq(memcmp(cut[0], hot.k + KEYENC_PREFIX, sl), 0);
	cr_assert_eq(len[1], sl + 1);
	cr_assert_eq(cut[1][sl], 0, "just after the key: nothing between");
	/* Already alone in [key, key 00): nothing to cut. */
	cr_assert_eq(heat_key_cuts(&ht, cut[0], len[0], cut[1], len[1], true,
	    cut, len, &item), 0);
	free(hot.k);
}

Test(heat, key_cuts_halve_an_even_collection)
{
	heat ht = { 0 };
	for (long i = 0; i < 12; i++) {
		skey k = sk_key(i);
		heat_note(&ht, k.k, k.kl, true, 10, false, true, T0);
		free(k.k);
	}
	uint8_t cut[2][HEAT_PK_MAX];
	size_t len[2];
	bool item;
	cr_assert_eq(heat_key_cuts(&ht, NULL, 0, NULL, 0, true, cut, len,
	    &item), 1);
	cr_assert(!item);
	/* The cut is a key of the collection near its middle (sk 6 or 7). */
	skey six = sk_key(6), seven = sk_key(7);
	bool at6 = len[0] == six.kl - KEYENC_PREFIX && memcmp(cut[0],
	    six.k + KEYENC_PREFIX, len[0]) == 0;
	bool at7 = len[0] == seven.kl - KEYENC_PREFIX && memcmp(cut[0],
	    seven.k + KEYENC_PREFIX, len[0]) == 0;
	cr_assert(at6 || at7);
	free(six.k);
	free(seven.k);
}

Test(heat, key_cuts_need_two_keys)
{
	heat ht = { 0 };
	skey k = sk_key(3);
	heat_note(&ht, k.k, k.kl, true, 100, false, true, T0);
	free(k.k);
	uint8_t cut[2][HEAT_PK_MAX];
	size_t len[2];
	bool item;
	cr_assert_eq(heat_key_cuts(&ht, NULL, 0, NULL, 0, true, cut, len,
	    &item), 0);
}

Test(heat, key_text_of_an_item_shows_both_keys)
{
	heat ht = { 0 };
	skey k = sk_key(42);
	heat_note(&ht, k.k, k.kl, true, 2, false, true, T0);
	free(k.k);
	char t[128];
	heat_key_text(&ht.top[0], t, sizeof(t));
	cr_assert_str_eq(t, "S:hot / N:42");
	heat_key_text(&ht.top[0], t, 6);
	cr_assert_lt(strlen(t), 6, "cut short, never past the buffer");
}
