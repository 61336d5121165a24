/*
 * plant.c — planted faults (plant.h).
 */
#include "plant.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
	const char *name;
	plant_kind kind;
} kinds[] = {
	{ "lose-ack", PLANT_LOSE_ACK },
	{ "dup-id", PLANT_DUP_ID },
	{ "stale-read", PLANT_STALE_READ },
	{ "txn-half", PLANT_TXN_HALF },
	{ "index-drop", PLANT_INDEX_DROP },
	{ "collect-early", PLANT_COLLECT_EARLY },
};

kv_err
plant_parse(plant *p, const char *spec)
{
	const char *colon = strchr(spec, ':');
	size_t len = colon != NULL ? (size_t) (colon - spec) : strlen(spec);
	uint64_t after = 200;
	if (colon != NULL) {
		char *end;
		unsigned long long v = strtoull(colon + 1, &end, 10);
		if (*end != '\0' || v == 0 || colon[1] == '\0')
			return KV_EINVAL;
		after = v;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i].name) == len &&
		    memcmp(kinds[i].name, spec, len) == 0) {
			p->kind = kinds[i].kind;
			p->after = after;
			atomic_store(&p->seen, 0);
			return KV_OK;
		}
	return KV_EINVAL;
}

void
plant_keep(plant *p, const uint8_t *key, size_t key_len,
    const uint8_t *rec, size_t rec_len)
{
	uint8_t *k = malloc(key_len > 0 ? key_len : 1);
	uint8_t *r = rec != NULL ? malloc(rec_len > 0 ? rec_len : 1) : NULL;
	if (k == NULL || (rec != NULL && r == NULL)) {
		free(k);
		free(r);
		return;
	}
	memcpy(k, key, key_len);
	if (r != NULL)
		memcpy(r, rec, rec_len);
	pthread_mutex_lock(&p->mu);
	if (!p->held) {
		p->key = k;
		p->key_len = key_len;
		p->rec = r;
		p->rec_len = rec_len;
		p->held = true;
		p->held_ms = clock_mono_ms();
		k = r = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	free(k);
	free(r);
	fprintf(stderr, "kv-node: PLANTED FAULT stale-read: kept the record "
	    "a write replaced\n");
}

bool
plant_stale(plant *p, const uint8_t *key, size_t key_len, uint8_t **rec,
    size_t *rec_len)
{
	bool take = false;
	pthread_mutex_lock(&p->mu);
	if (p->held && !p->served && p->key_len == key_len &&
	    memcmp(p->key, key, key_len) == 0 &&
	    clock_mono_ms() - p->held_ms >= 100) {
		p->served = take = true;
		*rec = p->rec;
		*rec_len = p->rec_len;
		p->rec = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	if (take)
		fprintf(stderr, "kv-node: PLANTED FAULT stale-read: answered "
		    "a read with the replaced record\n");
	return take;
}
