/*
 * workload.c — request bodies and answer checks (see workload.h). Bodies
 * are printed, not built with jansson: the hot path formats a few hundred
 * bytes per request. Answers to the run's requests are read in place with
 * jscan, which allocates nothing: a check runs on every answer, on the
 * same machine as the server it loads. The answers of setup and loading
 * (DescribeTable, BatchWriteItem) are few and parsed with jansson.
 */
#include "workload.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jscan.h"

#define QUERY_PK "q"          /* the query workload's item collection */
#define QUERY_ITEMS 100       /* its items: sk 0..99 */
#define QUERY_LIMIT 10
#define YCSB_E_ITEMS 10       /* sk 0..9 under every key */
#define INDEX_BUCKETS 256     /* --index-keys: g1 is one of b0..b255 */
#define HOT_KEY "hot"         /* update-counter's one item */
#define FRESH_DIGITS 16       /* a fresh pad starts with a counter in hex */

static const char *const kind_names[WORKLOAD_KIND_COUNT] = {
	[WORKLOAD_PUT] = "put",
	[WORKLOAD_GET] = "get",
	[WORKLOAD_QUERY] = "query",
	[WORKLOAD_UPDATE_COUNTER] = "update-counter",
	[WORKLOAD_COUNTER] = "counter",
	[WORKLOAD_YCSB_A] = "ycsb-a",
	[WORKLOAD_YCSB_B] = "ycsb-b",
	[WORKLOAD_YCSB_C] = "ycsb-c",
	[WORKLOAD_YCSB_E] = "ycsb-e",
	[WORKLOAD_TXN_PUT2] = "txn-put2",
	[WORKLOAD_TXN_UPDATE4] = "txn-update4",
	[WORKLOAD_TXN_GET4] = "txn-get4",
};

static const char *const op_names[WORKLOAD_OP_COUNT] = {
	[WORKLOAD_OP_GET] = "GetItem",
	[WORKLOAD_OP_PUT] = "PutItem",
	[WORKLOAD_OP_UPDATE] = "UpdateItem",
	[WORKLOAD_OP_QUERY] = "Query",
	[WORKLOAD_OP_TXN_WRITE] = "TransactWriteItems",
	[WORKLOAD_OP_TXN_GET] = "TransactGetItems",
};

/* Throttling answers, by the text after '#' in __type. */
static const char *const throttles[] = {
	"ThrottlingException",
	"ProvisionedThroughputExceededException",
	"RequestLimitExceeded",
};

kv_err
workload_parse(const char *name, workload_kind *kind)
{
	for (int k = 0; k < WORKLOAD_KIND_COUNT; k++) {
		if (strcmp(name, kind_names[k]) == 0) {
			*kind = (workload_kind) k;
			return KV_OK;
		}
	}
	return KV_EINVAL;
}

const char *
workload_name(workload_kind kind)
{
	return kind < WORKLOAD_KIND_COUNT ? kind_names[kind] : "?";
}

const char *
workload_op_name(workload_op op)
{
	return op < WORKLOAD_OP_COUNT ? op_names[op] : "?";
}

unsigned
workload_ops(workload_kind kind)
{
	switch (kind) {
	case WORKLOAD_PUT:
		return 1u << WORKLOAD_OP_PUT;
	case WORKLOAD_GET:
	case WORKLOAD_YCSB_C:
		return 1u << WORKLOAD_OP_GET;
	case WORKLOAD_QUERY:
		return 1u << WORKLOAD_OP_QUERY;
	case WORKLOAD_UPDATE_COUNTER:
	case WORKLOAD_COUNTER:
		return 1u << WORKLOAD_OP_UPDATE;
	case WORKLOAD_YCSB_A:
	case WORKLOAD_YCSB_B:
		return 1u << WORKLOAD_OP_GET | 1u << WORKLOAD_OP_UPDATE;
	case WORKLOAD_YCSB_E:
		return 1u << WORKLOAD_OP_QUERY | 1u << WORKLOAD_OP_PUT;
	case WORKLOAD_TXN_PUT2:
	case WORKLOAD_TXN_UPDATE4:
		return 1u << WORKLOAD_OP_TXN_WRITE;
	case WORKLOAD_TXN_GET4:
		return 1u << WORKLOAD_OP_TXN_GET;
	case WORKLOAD_KIND_COUNT:
		break;
	}
	return 0;
}

bool
workload_range_key(workload_kind kind)
{
	return kind == WORKLOAD_QUERY || kind == WORKLOAD_YCSB_E;
}

unsigned
workload_txn_items(workload_kind kind)
{
	switch (kind) {
	case WORKLOAD_TXN_PUT2:
		return 2;
	case WORKLOAD_TXN_UPDATE4:
	case WORKLOAD_TXN_GET4:
		return 4;
	default:
		return 0;
	}
}

uint64_t
workload_distinct_keys(const zipf *keys)
{
	return keys->shard_hot > 0 ? keys->n - 1 + keys->shard_hot : keys->n;
}

/*
 * Whether w's table has the sort key sk: a query of an index reads a
 * table written with --index-keys, whose only key is pk.
 */
static bool
table_has_sk(const workload *w)
{
	return (workload_range_key(w->kind) || w->collections) &&
	    w->index == NULL;
}

kv_err
workload_init(workload *w, workload_kind kind, const char *table,
    const char *prefix, size_t item_size, const zipf *keys, uint64_t seed,
    bool check)
{
	memset(w, 0, sizeof(*w));
	w->pad = malloc(item_size + 1);
	if (w->pad == NULL)
		return KV_ENOMEM;
	memset(w->pad, 'x', item_size);
	w->pad[item_size] = '\0';
	w->kind = kind;
	w->table = table;
	w->prefix = prefix;
	w->item_size = item_size;
	w->keys = *keys;
	w->check = check;
	/* Two streams, so the mix does not shift which keys are drawn. */
	zipf_rng_seed(&w->op_rng, seed);
	zipf_rng_seed(&w->key_rng, seed ^ UINT64_C(0x6b65797374726561));
	return KV_OK;
}

void
workload_fini(workload *w)
{
	free(w->pad);
	w->pad = NULL;
}

workload_op
workload_pick(workload *w)
{
	double u;
	switch (w->kind) {
	case WORKLOAD_PUT:
		return WORKLOAD_OP_PUT;
	case WORKLOAD_GET:
	case WORKLOAD_YCSB_C:
		return WORKLOAD_OP_GET;
	case WORKLOAD_QUERY:
		return WORKLOAD_OP_QUERY;
	case WORKLOAD_UPDATE_COUNTER:
	case WORKLOAD_COUNTER:
		return WORKLOAD_OP_UPDATE;
	case WORKLOAD_YCSB_A:
		u = zipf_rng_double(&w->op_rng);
		return u < 0.5 ? WORKLOAD_OP_GET : WORKLOAD_OP_UPDATE;
	case WORKLOAD_YCSB_B:
		u = zipf_rng_double(&w->op_rng);
		return u < 0.95 ? WORKLOAD_OP_GET : WORKLOAD_OP_UPDATE;
	case WORKLOAD_YCSB_E:
		u = zipf_rng_double(&w->op_rng);
		return u < 0.95 ? WORKLOAD_OP_QUERY : WORKLOAD_OP_PUT;
	case WORKLOAD_TXN_PUT2:
	case WORKLOAD_TXN_UPDATE4:
		return WORKLOAD_OP_TXN_WRITE;
	case WORKLOAD_TXN_GET4:
		return WORKLOAD_OP_TXN_GET;
	case WORKLOAD_KIND_COUNT:
		break;
	}
	return WORKLOAD_OP_GET;
}

/* Appends a pad whose first bytes are seq in hex, so each is new. */
static kv_err
fresh_pad(workload *w, http_buf *body)
{
	char head[FRESH_DIGITS + 1];
	snprintf(head, sizeof(head), "%016" PRIx64, w->seq++);
	size_t n = w->item_size < FRESH_DIGITS ? w->item_size : FRESH_DIGITS;
	kv_err e = http_buf_append(body, head, n);
	if (e != KV_OK)
		return e;
	return http_buf_append(body, w->pad + n, w->item_size - n);
}

static kv_err
draw_key(workload *w, char *buf, size_t len)
{
	zipf_key k = zipf_draw(&w->keys, &w->key_rng);
	return zipf_key_format(&k, w->prefix, buf, len);
}

/*
 * The key of the data set's index i (0..workload_distinct_keys - 1), as
 * --load numbers them: rank 0's shards first when it is sharded, then
 * the other ranks.
 */
static zipf_key
key_at(const workload *w, uint64_t i)
{
	zipf_key key = { i, -1 };
	if (w->keys.shard_hot > 0) {
		if (i < w->keys.shard_hot)
			key = (zipf_key) { 0, (int64_t) i };
		else
			key.rank = i - w->keys.shard_hot + 1;
	}
	return key;
}

/* The inverse of key_at. */
static uint64_t
index_of(const workload *w, zipf_key k)
{
	if (w->keys.shard_hot == 0)
		return k.rank;
	return k.rank == 0 ? (uint64_t) k.shard :
	                     k.rank - 1 + w->keys.shard_hot;
}

static bool
key_taken(const zipf_key *taken, size_t n, zipf_key k)
{
	for (size_t i = 0; i < n; i++)
		if (taken[i].rank == k.rank && taken[i].shard == k.shard)
			return true;
	return false;
}

#define DISTINCT_TRIES 16

/*
 * Draws n distinct keys into req->keys (and the first into req->key).
 * A key drawn again is drawn anew a few times; when that does not help
 * (few keys, a hot distribution) the next free key of the data set is
 * taken. kv_load.c makes sure there are at least n keys.
 */
static kv_err
draw_distinct(workload *w, unsigned n, workload_req *req)
{
	zipf_key taken[WORKLOAD_TXN_MAX];
	uint64_t total = workload_distinct_keys(&w->keys);
	if (n > WORKLOAD_TXN_MAX || n > total)
		return KV_EINVAL;
	for (unsigned i = 0; i < n; i++) {
		zipf_key k = zipf_draw(&w->keys, &w->key_rng);
		for (int t = 0; t < DISTINCT_TRIES && key_taken(taken, i, k);
		    t++)
			k = zipf_draw(&w->keys, &w->key_rng);
		while (key_taken(taken, i, k))
			k = key_at(w, (index_of(w, k) + 1) % total);
		taken[i] = k;
		kv_err e = zipf_key_format(&k, w->prefix, req->keys[i],
		    sizeof(req->keys[i]));
		if (e != KV_OK)
			return e;
	}
	req->n_keys = n;
	snprintf(req->key, sizeof(req->key), "%s", req->keys[0]);
	return KV_OK;
}

/*
 * Appends the body of a transaction of w's kind on its distinct drawn
 * keys: TransactWriteItems of Puts (put's items) or of Updates ADD n
 * :one, or TransactGetItems of Gets.
 */
static kv_err
txn_request(workload *w, workload_req *req, http_buf *body)
{
	kv_err e = draw_distinct(w, workload_txn_items(w->kind), req);
	if (e == KV_OK)
		e = http_buf_printf(body, "{\"TransactItems\":[");
	for (unsigned i = 0; e == KV_OK && i < req->n_keys; i++) {
		const char *sep = i > 0 ? "," : "";
		switch (w->kind) {
		case WORKLOAD_TXN_PUT2:
			e = http_buf_printf(body,
			    "%s{\"Put\":{\"TableName\":\"%s\",\"Item\":"
			    "{\"pk\":{\"S\":\"%s\"},\"v\":{\"S\":\"%s\"}}}}",
			    sep, w->table, req->keys[i], w->pad);
			break;
		case WORKLOAD_TXN_UPDATE4:
			e = http_buf_printf(body,
			    "%s{\"Update\":{\"TableName\":\"%s\",\"Key\":"
			    "{\"pk\":{\"S\":\"%s\"}},\"UpdateExpression\":"
			    "\"ADD n :one\",\"ExpressionAttributeValues\":"
			    "{\":one\":{\"N\":\"1\"}}}}",
			    sep, w->table, req->keys[i]);
			break;
		default:
			e = http_buf_printf(body,
			    "%s{\"Get\":{\"TableName\":\"%s\",\"Key\":"
			    "{\"pk\":{\"S\":\"%s\"}}}}",
			    sep, w->table, req->keys[i]);
			break;
		}
	}
	if (e == KV_OK)
		e = http_buf_append(body, "]}", 2);
	return e;
}

/*
 * Appends a Query of w's index for the items of one bucket, drawn
 * uniformly: g1 = "b<bucket>", Limit 10. req->key keeps the bucket's
 * name and req->sk its number, for the check.
 */
static kv_err
index_query(workload *w, workload_req *req, http_buf *body)
{
	req->sk = (int64_t) zipf_rng_below(&w->key_rng, INDEX_BUCKETS);
	req->limit = QUERY_LIMIT;
	snprintf(req->key, sizeof(req->key), "b%" PRId64, req->sk);
	return http_buf_printf(body,
	    "{\"TableName\":\"%s\",\"IndexName\":\"%s\","
	    "\"KeyConditionExpression\":\"g1 = :b\","
	    "\"ExpressionAttributeValues\":{\":b\":{\"S\":\"%s\"}},"
	    "\"Limit\":%d}",
	    w->table, w->index, req->key, req->limit);
}

/*
 * --collections: GetItem or PutItem (an overwrite, of the item's size) of
 * sort key 0..9, drawn uniformly, under the drawn key.
 */
static kv_err
collection_request(workload *w, workload_op op, workload_req *req,
    http_buf *body)
{
	req->sk = (int64_t) zipf_rng_below(&w->key_rng, YCSB_E_ITEMS);
	if (op == WORKLOAD_OP_GET)
		return http_buf_printf(body,
		    "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"},"
		    "\"sk\":{\"N\":\"%" PRId64 "\"}}}",
		    w->table, req->key, req->sk);
	return http_buf_printf(body,
	    "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"},"
	    "\"sk\":{\"N\":\"%" PRId64 "\"},\"v\":{\"S\":\"%s\"}}}",
	    w->table, req->key, req->sk, w->pad);
}

kv_err
workload_request(workload *w, workload_op op, workload_req *req,
    http_buf *body)
{
	kv_err e;
	req->op = op;
	req->sk = -1;
	req->limit = 0;
	req->n_keys = 0;
	if (op == WORKLOAD_OP_TXN_WRITE || op == WORKLOAD_OP_TXN_GET)
		return txn_request(w, req, body);
	if (w->kind == WORKLOAD_UPDATE_COUNTER) {
		snprintf(req->key, sizeof(req->key), "%s", HOT_KEY);
	} else if (w->kind == WORKLOAD_QUERY && !w->collections) {
		snprintf(req->key, sizeof(req->key), "%s", QUERY_PK);
	} else if ((e = draw_key(w, req->key, sizeof(req->key))) != KV_OK) {
		return e;
	}
	if (w->collections && (op == WORKLOAD_OP_GET || op == WORKLOAD_OP_PUT))
		return collection_request(w, op, req, body);
	switch (op) {
	case WORKLOAD_OP_GET:
		return http_buf_printf(body,
		    "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"}}}",
		    w->table, req->key);
	case WORKLOAD_OP_PUT:
		if (w->kind == WORKLOAD_YCSB_E) {
			req->sk = YCSB_E_ITEMS + (int64_t) w->seq++;
			return http_buf_printf(body,
			    "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":"
			    "\"%s\"},\"sk\":{\"N\":\"%" PRId64 "\"},"
			    "\"v\":{\"S\":\"%s\"}}}",
			    w->table, req->key, req->sk, w->pad);
		}
		if (w->index_keys) {
			uint64_t n = w->seq++;
			return http_buf_printf(body,
			    "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":"
			    "\"%s\"},\"g1\":{\"S\":\"b%u\"},\"g2\":{\"N\":"
			    "\"%" PRIu64 "\"},\"v\":{\"S\":\"%s\"}}}",
			    w->table, req->key, (unsigned) (n % INDEX_BUCKETS),
			    n, w->pad);
		}
		return http_buf_printf(body,
		    "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"},"
		    "\"v\":{\"S\":\"%s\"}}}",
		    w->table, req->key, w->pad);
	case WORKLOAD_OP_UPDATE:
		if (w->kind == WORKLOAD_UPDATE_COUNTER)
			return http_buf_printf(body,
			    "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":"
			    "\"%s\"}},\"UpdateExpression\":"
			    "\"SET n = if_not_exists(n, :z) + :one\","
			    "\"ExpressionAttributeValues\":{\":z\":{\"N\":"
			    "\"0\"},\":one\":{\"N\":\"1\"}}}",
			    w->table, req->key);
		if (w->kind == WORKLOAD_COUNTER)
			return http_buf_printf(body,
			    "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":"
			    "\"%s\"}},\"UpdateExpression\":\"ADD n :one\","
			    "\"ExpressionAttributeValues\":{\":one\":{\"N\":"
			    "\"1\"}}}",
			    w->table, req->key);
		e = http_buf_printf(body,
		    "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
		    "\"UpdateExpression\":\"SET v = :v\","
		    "\"ExpressionAttributeValues\":{\":v\":{\"S\":\"",
		    w->table, req->key);
		if (e == KV_OK)
			e = fresh_pad(w, body);
		if (e == KV_OK)
			e = http_buf_append(body, "\"}}}", 4);
		return e;
	case WORKLOAD_OP_QUERY:
		if (w->index != NULL)
			return index_query(w, req, body);
		if (w->kind == WORKLOAD_YCSB_E) {
			req->sk = (int64_t) zipf_rng_below(&w->key_rng,
			    YCSB_E_ITEMS);
			req->limit = 1 + (int) zipf_rng_below(&w->key_rng, 10);
			return http_buf_printf(body,
			    "{\"TableName\":\"%s\",\"KeyConditionExpression\":"
			    "\"pk = :p AND sk >= :s\","
			    "\"ExpressionAttributeValues\":{\":p\":{\"S\":"
			    "\"%s\"},\":s\":{\"N\":\"%" PRId64 "\"}},"
			    "\"Limit\":%d}",
			    w->table, req->key, req->sk, req->limit);
		}
		req->limit = QUERY_LIMIT;
		if (w->collections)
			req->sk = 0; /* the whole collection: sk 0..9 */
		return http_buf_printf(body,
		    "{\"TableName\":\"%s\",\"KeyConditionExpression\":"
		    "\"pk = :p\",\"ExpressionAttributeValues\":{\":p\":"
		    "{\"S\":\"%s\"}},\"Limit\":%d}",
		    w->table, req->key, req->limit);
	case WORKLOAD_OP_TXN_WRITE:
	case WORKLOAD_OP_TXN_GET:
	case WORKLOAD_OP_COUNT:
		break;
	}
	return KV_EINVAL;
}

static void
verdict(workload_verdict *v, workload_outcome o, const char *type)
{
	v->outcome = o;
	snprintf(v->type, sizeof(v->type), "%s", type);
}

/*
 * Copies the decoded text of string s after its last '#' into buf[0..cap)
 * as snprintf would, and returns that text's full length.
 */
static size_t
after_hash(jscan_val s, char *buf, size_t cap)
{
	jscan_chars c;
	size_t n = 0;
	jscan_chars_init(&c, s);
	for (int b; (b = jscan_chars_next(&c)) >= 0;) {
		if (b == '#') {
			n = 0;
			continue;
		}
		if (n + 1 < cap)
			buf[n] = (char) b;
		n++;
	}
	buf[n < cap ? n : cap - 1] = '\0';
	return n;
}

void
workload_classify(int status, const char *body, size_t len,
    workload_verdict *v)
{
	v->type[0] = '\0';
	v->message[0] = '\0';
	if (status == 200) {
		v->outcome = WORKLOAD_OK;
		return;
	}
	/* An invalid body leaves j absent: no type, no message. */
	jscan_val j = { NULL, 0 };
	jscan_doc(body, len, &j);
	jscan_val type = jscan_get(j, "__type");
	jscan_val msg = jscan_get(j, "message");
	if (jscan_kind_of(msg) != JSCAN_STRING)
		msg = jscan_get(j, "Message");
	if (jscan_kind_of(msg) == JSCAN_STRING)
		jscan_str_copy(msg, v->message, sizeof(v->message));
	if (jscan_kind_of(type) != JSCAN_STRING) {
		char t[32];
		snprintf(t, sizeof(t), "HTTP%d", status);
		verdict(v, WORKLOAD_ERROR, t);
		return;
	}
	char name[sizeof(v->type)];
	size_t n = after_hash(type, name, sizeof(name));
	workload_outcome o = WORKLOAD_ERROR;
	/* Every throttle name fits name, so a match is on the whole name. */
	for (size_t i = 0; i < sizeof(throttles) / sizeof(throttles[0]); i++)
		if (n == strlen(throttles[i]) &&
		    strcmp(name, throttles[i]) == 0)
			o = WORKLOAD_THROTTLED;
	verdict(v, o, name);
}

/* Whether item is an object whose pk is {"S": key}. */
static bool
item_has_key(jscan_val item, const char *key)
{
	return jscan_str_eq(jscan_get(jscan_get(item, "pk"), "S"), key);
}

/*
 * The sort key {"N": ...} of an item as an integer, or -1. Its "N" string is read as
 * strtoll(s, &end, 10) reads it, and must be read whole: blanks and a
 * sign may lead, and a value out of range saturates.
 */
static long long
item_sk(jscan_val sk)
{
	jscan_val s = jscan_get(sk, "N");
	if (jscan_kind_of(s) != JSCAN_STRING)
		return -1;
	jscan_chars c;
	jscan_chars_init(&c, s);
	int b = jscan_chars_next(&c);
	while (b >= 0 && isspace(b))
		b = jscan_chars_next(&c);
	bool neg = b == '-';
	if (b == '-' || b == '+')
		b = jscan_chars_next(&c);
	if (b < '0' || b > '9')
		return -1;
	unsigned long long limit = neg ? (unsigned long long) LLONG_MAX + 1 :
	                                 (unsigned long long) LLONG_MAX;
	unsigned long long mag = 0;
	for (; b >= '0' && b <= '9'; b = jscan_chars_next(&c)) {
		unsigned d = (unsigned) (b - '0');
		mag = mag > (limit - d) / 10 ? limit : mag * 10 + d;
	}
	if (b != -1)
		return -1;
	if (!neg)
		return (long long) mag;
	return mag == limit ? LLONG_MIN : -(long long) mag;
}

/*
 * Finds the members a and b of obj in one pass (absent when missing; the
 * last of a name wins, as in jansson).
 */
static void
members2(jscan_val obj, const char *a, jscan_val *va, const char *b,
    jscan_val *vb)
{
	jscan_iter it;
	jscan_val name, val;
	va->p = vb->p = NULL;
	va->n = vb->n = 0;
	jscan_members_init(&it, obj);
	while (jscan_member_next(&it, &name, &val)) {
		if (jscan_str_eq(name, a))
			*va = val;
		else if (jscan_str_eq(name, b))
			*vb = val;
	}
}

/* Checks a Query page against what was loaded; the reason, or NULL. */
static const char *
check_page(const workload *w, const workload_req *req, jscan_val j)
{
	jscan_val items, count;
	members2(j, "Items", &items, "Count", &count);
	long long n;
	if (jscan_kind_of(items) != JSCAN_ARRAY || !jscan_int(count, &n))
		return "BadShape";
	long long lo = req->limit, hi = req->limit;
	if (w->kind == WORKLOAD_YCSB_E || w->collections) {
		/* sk 0..9 were loaded, and puts only add sk >= 10. */
		if (lo > YCSB_E_ITEMS - req->sk)
			lo = YCSB_E_ITEMS - req->sk;
	}
	if (n < lo || n > hi)
		return "BadPage";
	long long prev = -1, seen = 0;
	jscan_iter it;
	jscan_val item;
	jscan_iter_init(&it, items);
	while (jscan_next(&it, &item)) {
		jscan_val pk, sk_v;
		members2(item, "pk", &pk, "sk", &sk_v);
		long long sk = item_sk(sk_v);
		if (!jscan_str_eq(jscan_get(pk, "S"), req->key) ||
		    sk < req->sk || sk <= prev || ++seen > n)
			return "BadPage";
		prev = sk;
	}
	return seen == n ? NULL : "BadPage";
}

/*
 * Checks a page of a Query of the index: at most Limit items, each of
 * the bucket asked, with a g2 in that bucket (puts of --index-keys and
 * --load both give g2 = n the bucket n mod 256), in g2 order. Two items
 * may share a g2, as each kv-load run of puts counts from 0 again. The
 * reason, or NULL.
 */
static const char *
check_index_page(const workload_req *req, jscan_val j)
{
	jscan_val items, count;
	members2(j, "Items", &items, "Count", &count);
	long long n;
	if (jscan_kind_of(items) != JSCAN_ARRAY || !jscan_int(count, &n))
		return "BadShape";
	if (n < 0 || n > req->limit)
		return "BadPage";
	long long prev = 0, seen = 0;
	jscan_iter it;
	jscan_val item;
	jscan_iter_init(&it, items);
	while (jscan_next(&it, &item)) {
		jscan_val g1, g2_v;
		members2(item, "g1", &g1, "g2", &g2_v);
		long long g2 = item_sk(g2_v);
		if (!jscan_str_eq(jscan_get(g1, "S"), req->key) || g2 < prev ||
		    g2 % INDEX_BUCKETS != req->sk || ++seen > n)
			return "BadPage";
		prev = g2;
	}
	return seen == n ? NULL : "BadPage";
}

/*
 * Checks a TransactGetItems answer: Responses lists, in the order asked,
 * one object per key, each with the item of that key (every key read is
 * loaded). The reason, or NULL.
 */
static const char *
check_txn_get(const workload_req *req, jscan_val j)
{
	jscan_val list = jscan_get(j, "Responses");
	if (jscan_kind_of(list) != JSCAN_ARRAY)
		return "BadShape";
	jscan_iter it;
	jscan_val r;
	unsigned seen = 0;
	jscan_iter_init(&it, list);
	while (jscan_next(&it, &r)) {
		if (seen >= req->n_keys || jscan_kind_of(r) != JSCAN_OBJECT)
			return "BadShape";
		jscan_val item = jscan_get(r, "Item");
		if (jscan_kind_of(item) == JSCAN_NONE)
			return "MissingItem";
		if (jscan_kind_of(item) != JSCAN_OBJECT ||
		    !item_has_key(item, req->keys[seen]))
			return "WrongItem";
		seen++;
	}
	return seen == req->n_keys ? NULL : "BadShape";
}

static bool
is_txn(workload_op op)
{
	return op == WORKLOAD_OP_TXN_WRITE || op == WORKLOAD_OP_TXN_GET;
}

/*
 * Judges a transaction's TransactionCanceledException: CANCELED, by the
 * first reason whose Code is not None, or by the exception's name when
 * there is none. With checks, CancellationReasons, when present, must
 * list one object with a string Code per action (else WRONG,
 * BadReasons).
 */
static void
judge_canceled(const workload *w, const workload_req *req, const char *body,
    size_t len, workload_verdict *v)
{
	v->outcome = WORKLOAD_CANCELED;
	jscan_val j = { NULL, 0 };
	jscan_doc(body, len, &j);
	jscan_val list = jscan_get(j, "CancellationReasons");
	if (jscan_kind_of(list) == JSCAN_NONE)
		return;
	bool bad = jscan_kind_of(list) != JSCAN_ARRAY;
	bool named = false;
	unsigned seen = 0;
	jscan_iter it;
	jscan_val r;
	jscan_iter_init(&it, list);
	while (!bad && jscan_next(&it, &r)) {
		jscan_val code = jscan_get(r, "Code");
		if (jscan_kind_of(code) != JSCAN_STRING) {
			bad = true;
			break;
		}
		if (!named && !jscan_str_eq(code, "None")) {
			jscan_str_copy(code, v->type, sizeof(v->type));
			named = true;
		}
		seen++;
	}
	if (w->check && (bad || seen != req->n_keys))
		verdict(v, WORKLOAD_WRONG, "BadReasons");
}

void
workload_check(const workload *w, const workload_req *req, int status,
    const char *body, size_t len, workload_verdict *v)
{
	workload_classify(status, body, len, v);
	if (status == 400 && is_txn(req->op) &&
	    v->outcome == WORKLOAD_ERROR &&
	    strcmp(v->type, "TransactionCanceledException") == 0) {
		judge_canceled(w, req, body, len, v);
		return;
	}
	if (status != 200 || !w->check)
		return;
	jscan_val j;
	if (!jscan_doc(body, len, &j) || jscan_kind_of(j) != JSCAN_OBJECT) {
		verdict(v, WORKLOAD_WRONG, "BadJson");
		return;
	}
	const char *wrong = NULL;
	switch (req->op) {
	case WORKLOAD_OP_GET: {
		jscan_val item = jscan_get(j, "Item");
		if (jscan_kind_of(item) == JSCAN_NONE)
			wrong = "MissingItem";
		else if (jscan_kind_of(item) != JSCAN_OBJECT ||
		    !item_has_key(item, req->key))
			wrong = "WrongItem";
		break;
	}
	case WORKLOAD_OP_QUERY:
		wrong = w->index != NULL ? check_index_page(req, j) :
		                           check_page(w, req, j);
		break;
	case WORKLOAD_OP_TXN_GET:
		wrong = check_txn_get(req, j);
		break;
	case WORKLOAD_OP_PUT:
	case WORKLOAD_OP_UPDATE:
	case WORKLOAD_OP_TXN_WRITE: /* an object, of whatever members */
	case WORKLOAD_OP_COUNT:
		break;
	}
	if (wrong != NULL)
		verdict(v, WORKLOAD_WRONG, wrong);
}

/*
 * Appends the CreateTable body of a table keyed by pk with the global
 * index w->index on the keys --index-keys writes: g1 HASH, g2 RANGE,
 * every attribute projected.
 */
static kv_err
create_indexed_table(const workload *w, http_buf *body)
{
	return http_buf_printf(body,
	    "{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\","
	    "\"AttributeDefinitions\":["
	    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
	    "{\"AttributeName\":\"g1\",\"AttributeType\":\"S\"},"
	    "{\"AttributeName\":\"g2\",\"AttributeType\":\"N\"}],"
	    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
	    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"%s\","
	    "\"KeySchema\":["
	    "{\"AttributeName\":\"g1\",\"KeyType\":\"HASH\"},"
	    "{\"AttributeName\":\"g2\",\"KeyType\":\"RANGE\"}],"
	    "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}",
	    w->table, w->index);
}

kv_err
workload_create_table(const workload *w, http_buf *body)
{
	if (w->index != NULL)
		return create_indexed_table(w, body);
	if (table_has_sk(w))
		return http_buf_printf(body,
		    "{\"TableName\":\"%s\","
		    "\"BillingMode\":\"PAY_PER_REQUEST\","
		    "\"AttributeDefinitions\":["
		    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
		    "{\"AttributeName\":\"sk\",\"AttributeType\":\"N\"}],"
		    "\"KeySchema\":["
		    "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
		    "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}",
		    w->table);
	return http_buf_printf(body,
	    "{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\","
	    "\"AttributeDefinitions\":["
	    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],"
	    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}",
	    w->table);
}

kv_err
workload_describe_table(const workload *w, http_buf *body)
{
	return http_buf_printf(body, "{\"TableName\":\"%s\"}", w->table);
}

/* The type ("S", "N", "B") AttributeDefinitions gives name, or "?". */
static const char *
attr_type(json_t *table, const char *name)
{
	json_t *defs = json_object_get(table, "AttributeDefinitions");
	for (size_t i = 0; i < json_array_size(defs); i++) {
		json_t *d = json_array_get(defs, i);
		const char *n =
		    json_string_value(json_object_get(d, "AttributeName"));
		const char *t =
		    json_string_value(json_object_get(d, "AttributeType"));
		if (n != NULL && t != NULL && strcmp(n, name) == 0)
			return t;
	}
	return "?";
}

/* The names of the hash and range keys a KeySchema gives, or NULL. */
static void
key_names(json_t *schema, const char **hash, const char **range)
{
	*hash = *range = NULL;
	for (size_t i = 0; i < json_array_size(schema); i++) {
		json_t *k = json_array_get(schema, i);
		const char *n =
		    json_string_value(json_object_get(k, "AttributeName"));
		const char *kt =
		    json_string_value(json_object_get(k, "KeyType"));
		if (n == NULL || kt == NULL)
			continue;
		if (strcmp(kt, "HASH") == 0)
			*hash = n;
		else if (strcmp(kt, "RANGE") == 0)
			*range = n;
	}
}

/*
 * Checks that table t (a DescribeTable answer's Table) has the global
 * index w->index keyed by g1 S and g2 N, and clears *active while that
 * index is not ACTIVE. KV_EINVAL with the reason in why[0..whylen).
 */
static kv_err
index_ready(const workload *w, json_t *t, bool *active, char *why,
    size_t whylen)
{
	json_t *gsis = json_object_get(t, "GlobalSecondaryIndexes");
	json_t *gsi = NULL;
	for (size_t i = 0; i < json_array_size(gsis); i++) {
		json_t *g = json_array_get(gsis, i);
		const char *n =
		    json_string_value(json_object_get(g, "IndexName"));
		if (n != NULL && strcmp(n, w->index) == 0)
			gsi = g;
	}
	const char *hash, *range;
	key_names(json_object_get(gsi, "KeySchema"), &hash, &range);
	if (hash == NULL || strcmp(hash, "g1") != 0 ||
	    strcmp(attr_type(t, "g1"), "S") != 0 || range == NULL ||
	    strcmp(range, "g2") != 0 || strcmp(attr_type(t, "g2"), "N") != 0) {
		snprintf(why, whylen, "table %s has no global index %s keyed "
		    "(g1 S, g2 N), the keys --index-keys writes, which "
		    "--index needs", w->table, w->index);
		return KV_EINVAL;
	}
	const char *status =
	    json_string_value(json_object_get(gsi, "IndexStatus"));
	if (status != NULL && strcmp(status, "ACTIVE") != 0)
		*active = false;
	return KV_OK;
}

kv_err
workload_table_ready(const workload *w, const char *body, size_t len,
    bool *active, char *why, size_t whylen)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	json_t *t = json_object_get(j, "Table");
	const char *status =
	    json_string_value(json_object_get(t, "TableStatus"));
	json_t *schema = json_object_get(t, "KeySchema");
	if (status == NULL || !json_is_array(schema)) {
		json_decref(j);
		return KV_PROTO;
	}
	*active = strcmp(status, "ACTIVE") == 0;
	const char *hash, *range;
	key_names(schema, &hash, &range);
	char have[160];
	snprintf(have, sizeof(have), "%s %s%s%s%s",
	    hash != NULL ? hash : "?",
	    hash != NULL ? attr_type(t, hash) : "",
	    range != NULL ? ", " : "", range != NULL ? range : "",
	    range != NULL ? " " : "");
	if (range != NULL)
		snprintf(have + strlen(have), sizeof(have) - strlen(have),
		    "%s", attr_type(t, range));
	bool want_range = table_has_sk(w);
	bool ok = hash != NULL && strcmp(hash, "pk") == 0 &&
	    strcmp(attr_type(t, "pk"), "S") == 0 &&
	    (want_range ? range != NULL && strcmp(range, "sk") == 0 &&
	        strcmp(attr_type(t, "sk"), "N") == 0 :
	                  range == NULL);
	kv_err rv = KV_OK;
	if (!ok) {
		snprintf(why, whylen,
		    "table %s has key schema (%s) but workload %s needs "
		    "(pk S%s): use another --table", w->table, have,
		    workload_name(w->kind), want_range ? ", sk N" : "");
		rv = KV_EINVAL;
	}
	if (rv == KV_OK && w->index != NULL)
		rv = index_ready(w, t, active, why, whylen);
	json_decref(j);
	return rv;
}

/* Items under each key loaded (ycsb-e has 10 sort keys, others 1). */
static uint64_t
per_key(const workload *w)
{
	return w->kind == WORKLOAD_YCSB_E || w->collections ? YCSB_E_ITEMS :
	    1;
}

/* Keys the data set has: every rank, rank 0 as its shards if sharded. */
static uint64_t
key_count(const workload *w)
{
	return workload_distinct_keys(&w->keys);
}

uint64_t
workload_load_items(const workload *w)
{
	switch (w->kind) {
	case WORKLOAD_GET:
	case WORKLOAD_YCSB_A:
	case WORKLOAD_YCSB_B:
	case WORKLOAD_YCSB_C:
	case WORKLOAD_YCSB_E:
	case WORKLOAD_TXN_UPDATE4:
	case WORKLOAD_TXN_GET4:
		return key_count(w) * per_key(w);
	case WORKLOAD_QUERY:
		if (w->collections)
			return key_count(w) * per_key(w);
		return w->index != NULL ? key_count(w) : QUERY_ITEMS;
	default:
		return 0;
	}
}

/* Appends item i of the data set as a PutRequest. */
static kv_err
load_item(const workload *w, uint64_t i, http_buf *body)
{
	if (w->kind == WORKLOAD_QUERY && w->index == NULL && !w->collections)
		return http_buf_printf(body,
		    "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"%s\"},"
		    "\"sk\":{\"N\":\"%" PRIu64 "\"},\"v\":{\"S\":\"%s\"}}}}",
		    QUERY_PK, i, w->pad);
	zipf_key key = key_at(w, i / per_key(w));
	char name[96];
	kv_err e = zipf_key_format(&key, w->prefix, name, sizeof(name));
	if (e != KV_OK)
		return e;
	if (w->kind == WORKLOAD_YCSB_E || w->collections)
		return http_buf_printf(body,
		    "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"%s\"},"
		    "\"sk\":{\"N\":\"%" PRIu64 "\"},\"v\":{\"S\":\"%s\"}}}}",
		    name, i % YCSB_E_ITEMS, w->pad);
	if (w->index != NULL)
		return http_buf_printf(body,
		    "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"%s\"},"
		    "\"g1\":{\"S\":\"b%u\"},\"g2\":{\"N\":\"%" PRIu64 "\"},"
		    "\"v\":{\"S\":\"%s\"}}}}",
		    name, (unsigned) (i % INDEX_BUCKETS), i, w->pad);
	return http_buf_printf(body,
	    "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"%s\"},"
	    "\"v\":{\"S\":\"%s\"}}}}",
	    name, w->pad);
}

kv_err
workload_load_batch(const workload *w, uint64_t first, size_t n,
    http_buf *body)
{
	kv_err e = http_buf_printf(body, "{\"RequestItems\":{\"%s\":[",
	    w->table);
	for (size_t i = 0; e == KV_OK && i < n; i++) {
		if (i > 0)
			e = http_buf_append(body, ",", 1);
		if (e == KV_OK)
			e = load_item(w, first + i, body);
	}
	if (e == KV_OK)
		e = http_buf_append(body, "]}}", 3);
	return e;
}

kv_err
workload_unprocessed(const char *body, size_t len, http_buf *retry,
    size_t *count)
{
	json_t *j = json_loadb(body, len, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		return KV_PROTO;
	}
	json_t *un = json_object_get(j, "UnprocessedItems");
	*count = 0;
	if (un == NULL) {
		json_decref(j);
		return KV_OK;
	}
	if (!json_is_object(un)) {
		json_decref(j);
		return KV_PROTO;
	}
	const char *table;
	json_t *reqs;
	json_object_foreach(un, table, reqs)
		*count += json_array_size(reqs);
	kv_err rv = KV_OK;
	if (*count > 0) {
		json_t *again = json_pack("{s:O}", "RequestItems", un);
		char *s =
		    again != NULL ? json_dumps(again, JSON_COMPACT) : NULL;
		rv = s != NULL ? http_buf_append(retry, s, strlen(s)) :
		                 KV_ENOMEM;
		free(s);
		json_decref(again);
	}
	json_decref(j);
	return rv;
}
