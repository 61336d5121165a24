/*
 * admin_reshape.c — kv-admin's commands for adaptive capacity:
 *
 *   partition split TABLE PART [--at HASH]...   split by hand (hex hashes
 *                                               where the new partitions
 *                                               start; none: the middle)
 *   partition move TABLE PART NODE [--pause-after STEP MS]
 *                                               move by hand; answers when
 *                                               done (or undone). STEP is
 *                                               begin, chunk, copy,
 *                                               catch-up, fence or taken:
 *                                               a pause there, for tests
 *                                               that kill a node mid-move;
 *                                               --plant skip-catch-up
 *                                               loses the writes made
 *                                               during the copy, on
 *                                               purpose (to show the
 *                                               checkers catch it)
 *   status --events                             recent splits and moves,
 *                                               one JSON document a line
 *   status --json                               the whole cluster map
 *   node add N | node drain N                   node N takes partitions
 *                                               (a standby node of the
 *                                               cluster file, or one
 *                                               drained) and partitions
 *                                               move onto it until the
 *                                               nodes are even; or every
 *                                               partition moves off it
 *   hot-keys TABLE [--json]                     each partition's top keys
 *                                               by consumed units and by
 *                                               throttled requests
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "admin.h"
#include "metrics.h"

/* A move of a large partition takes a while: wait for it. */
#define MOVE_TIMEOUT_MS (30 * 60 * 1000)

static bool
parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	if (config_number(s, &v) != KV_OK || v > UINT32_MAX)
		return false;
	*out = (uint32_t) v;
	return true;
}

static bool
parse_hash(const char *s, uint64_t *out)
{
	char *end;
	if (strncmp(s, "0x", 2) == 0)
		s += 2;
	if (*s == '\0' || strlen(s) > 16)
		return false;
	*out = strtoull(s, &end, 16);
	return *end == '\0';
}

/*
 * One call to the catalog node: KV_OK, or the error after saying on
 * stderr "kv-admin: WHAT failed: ERR: message".
 */
static kv_err
ask(rpc_client *cat, const rpc_request *req, int timeout_ms, const char *what,
    arena *a, rpc_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	kv_err rv = rpc_call(cat, req, a, resp, timeout_ms);
	bool answered = rv == KV_OK;
	if (rv == KV_OK)
		rv = resp->code;
	if (rv != KV_OK)
		fprintf(stderr, "kv-admin: %s failed: %s%s%s\n", what,
		    kv_err_name(rv), answered && resp->message != NULL ?
		    ": " : "", answered && resp->message != NULL ?
		    resp->message : "");
	return rv;
}

static void
print_parts(const table *t)
{
	printf("%s: %zu partitions\n", t->name, t->n_parts);
	for (size_t i = 0; i < t->n_parts; i++)
		printf("  %-5u %016" PRIx64 "-%016" PRIx64 "  node %-3u "
		    "epoch %" PRIu64 "\n", t->parts[i].id, t->parts[i].lo,
		    t->parts[i].last, t->parts[i].node, t->parts[i].epoch);
}

int
admin_split(rpc_client *cat, int argc, char **argv)
{
	uint64_t cuts[RPC_MAX_CUTS];
	size_t n_cuts = 0;
	rpc_request req = { .op = RPC_SPLIT, .reason = RPC_REASON_OPERATOR };
	if (argc < 2 || !parse_u32(argv[1], &req.part))
		goto usage;
	req.table_name = argv[0];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--at") != 0 || i + 1 == argc ||
		    n_cuts == RPC_MAX_CUTS ||
		    !parse_hash(argv[i + 1], &cuts[n_cuts]))
			goto usage;
		n_cuts++;
		i++;
	}
	req.cuts = cuts;
	req.n_cuts = n_cuts;
	arena a;
	rpc_response resp;
	arena_init(&a);
	kv_err rv = ask(cat, &req, TIMEOUT_MS, "split", &a, &resp);
	if (rv == KV_OK && resp.table != NULL)
		print_parts(resp.table);
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv == KV_OK ? 0 : 1;
usage:
	fprintf(stderr, "kv-admin: partition split TABLE PART [--at HASH]...\n");
	return 2;
}

int
admin_move(rpc_client *cat, int argc, char **argv)
{
	static const char *const steps[] = { "begin", "chunk", "copy",
	    "catch-up", "fence", "taken" };
	rpc_request req = { .op = RPC_MOVE, .reason = RPC_REASON_OPERATOR };
	if (argc != 3 && argc != 5 && argc != 6)
		goto usage;
	req.table_name = argv[0];
	if (!parse_u32(argv[1], &req.part) || !parse_u32(argv[2], &req.node))
		goto usage;
	if (argc == 5 && strcmp(argv[3], "--plant") == 0 &&
	    strcmp(argv[4], "skip-catch-up") == 0) {
		req.limit = MOVE_PLANT_SKIP_CATCH_UP;
		req.max_bytes = 500;
	} else if (argc == 5) {
		goto usage;
	} else if (argc == 6) {
		uint64_t ms;
		if (strcmp(argv[3], "--pause-after") != 0 ||
		    config_number(argv[5], &ms) != KV_OK)
			goto usage;
		for (uint32_t k = 0; k < 6; k++)
			if (strcmp(argv[4], steps[k]) == 0)
				req.limit = k + 1;
		if (req.limit == 0)
			goto usage;
		req.max_bytes = ms;
	}
	arena a;
	rpc_response resp;
	arena_init(&a);
	kv_err rv = ask(cat, &req, MOVE_TIMEOUT_MS, "move", &a, &resp);
	if (rv == KV_OK)
		printf("%s partition %u: on node %u (%s)\n", req.table_name,
		    req.part, req.node, resp.message != NULL ? resp.message :
		    "moved");
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv == KV_OK ? 0 : 1;
usage:
	fprintf(stderr, "kv-admin: partition move TABLE PART NODE "
	    "[--pause-after begin|chunk|copy|catch-up|fence|taken MS | "
	    "--plant skip-catch-up]\n");
	return 2;
}

int
admin_node(rpc_client *cat, int argc, char **argv)
{
	rpc_request req = { .op = RPC_NODE };
	if (argc != 2 || !parse_u32(argv[1], &req.node) ||
	    (strcmp(argv[0], "add") != 0 && strcmp(argv[0], "drain") != 0)) {
		fprintf(stderr, "kv-admin: node add N | node drain N\n");
		return 2;
	}
	req.limit = strcmp(argv[0], "add") == 0 ? RPC_NODE_ADD :
	    RPC_NODE_DRAIN;
	arena a;
	rpc_response resp;
	arena_init(&a);
	kv_err rv = ask(cat, &req, MOVE_TIMEOUT_MS, argv[0], &a, &resp);
	if (rv == KV_OK)
		printf("node %u: %s\n", req.node, resp.message != NULL ?
		    resp.message : "done");
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv == KV_OK ? 0 : 1;
}

int
admin_events(rpc_client *cat)
{
	arena a;
	rpc_request req = { .op = RPC_EVENTS };
	rpc_response resp;
	arena_init(&a);
	kv_err rv = ask(cat, &req, TIMEOUT_MS, "events", &a, &resp);
	for (size_t i = 0; rv == KV_OK && i < resp.n_blobs; i++)
		printf("%.*s\n", (int) resp.blob_lens[i],
		    (const char *) resp.blobs[i]);
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv == KV_OK ? 0 : 1;
}

/* The catalog, from node 0 (owned; NULL after a message). */
static catalog *
get_catalog(rpc_client *cat)
{
	arena a;
	rpc_request req = { .op = RPC_CATALOG_GET };
	rpc_response resp;
	catalog *c = NULL;
	arena_init(&a);
	if (rpc_call(cat, &req, &a, &resp, TIMEOUT_MS) == KV_OK &&
	    resp.code == KV_OK) {
		c = resp.cat;
		resp.cat = NULL;
	}
	wire_response_fini(&resp);
	arena_fini(&a);
	if (c == NULL)
		fprintf(stderr, "kv-admin: the catalog is unavailable (node 0 "
		    "is down?)\n");
	return c;
}

static int
by_field(const void *a, const void *b, const char *f)
{
	double x = json_number_value(json_object_get(*(json_t *const *) a, f));
	double y = json_number_value(json_object_get(*(json_t *const *) b, f));
	return x > y ? -1 : x < y;
}

static int
by_units(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(*(json_t *const *) a,
	    "read_units")) + json_number_value(json_object_get(
	    *(json_t *const *) a, "write_units"));
	double y = json_number_value(json_object_get(*(json_t *const *) b,
	    "read_units")) + json_number_value(json_object_get(
	    *(json_t *const *) b, "write_units"));
	return x > y ? -1 : x < y;
}

static int
by_throttled(const void *a, const void *b)
{
	return by_field(a, b, "throttled");
}

static void
print_keys(json_t *keys, int (*cmp)(const void *, const void *),
    const char *what, bool throttles)
{
	size_t n = json_array_size(keys), shown = 0;
	json_t **v = calloc(n + 1, sizeof(*v));
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(keys, i);
	qsort(v, n, sizeof(*v), cmp);
	printf("    by %s:\n", what);
	for (size_t i = 0; i < n && shown < 5; i++) {
		double r = json_number_value(json_object_get(v[i],
		    "read_units"));
		double w = json_number_value(json_object_get(v[i],
		    "write_units"));
		json_int_t t = json_integer_value(json_object_get(v[i],
		    "throttled"));
		if (throttles ? t == 0 : r + w == 0)
			continue;
		printf("      %-40.40s %10.1f RCU %10.1f WCU %8lld throttled\n",
		    json_string_value(json_object_get(v[i], "key")), r, w,
		    (long long) t);
		shown++;
	}
	if (shown == 0)
		printf("      (none)\n");
	free(v);
}

int
admin_hot_keys(const config *cfg, rpc_client **nodes, const char *name,
    bool as_json)
{
	catalog *c = get_catalog(nodes[0]);
	if (c == NULL)
		return 1;
	const table *t = catalog_find(c, name, strlen(name));
	if (t == NULL) {
		fprintf(stderr, "kv-admin: no table %s\n", name);
		catalog_free(c);
		return 1;
	}
	int rc = 0;
	if (!as_json)
		printf("%s: top keys per partition over the last ~%d s "
		    "(consumed units; sketch counts may overstate a key by "
		    "its error)\n", name, 20);
	for (size_t p = 0; p < t->n_parts; p++) {
		const partition *pp = &t->parts[p];
		arena a;
		rpc_request req = { .op = RPC_HOT_KEYS, .table_id = t->id };
		rpc_response resp;
		arena_init(&a);
		kv_err rv = pp->node < cfg->n_nodes ? rpc_call(nodes[pp->node],
		    &req, &a, &resp, TIMEOUT_MS) : KV_EINVAL;
		if (rv == KV_OK)
			rv = resp.code;
		json_t *doc = NULL;
		for (size_t i = 0; rv == KV_OK && i < resp.n_blobs; i++) {
			json_t *j = json_loadb((const char *) resp.blobs[i],
			    resp.blob_lens[i], 0, NULL);
			if (j != NULL && json_integer_value(json_object_get(j,
			    "part")) == pp->id) {
				doc = j;
				break;
			}
			json_decref(j);
		}
		if (doc == NULL) {
			printf("  partition %u (node %u): %s\n", pp->id,
			    pp->node, rv == KV_OK ? "not served there yet" :
			    kv_err_name(rv));
			rc = 1;
		} else if (as_json) {
			json_object_set_new(doc, "table", json_string(name));
			char *s = json_dumps(doc, JSON_COMPACT);
			if (s != NULL)
				printf("%s\n", s);
			free(s);
		} else {
			printf("  partition %u (node %u, hashes %s-%s): %.1f "
			    "RCU %.1f WCU, %lld throttled\n", pp->id, pp->node,
			    json_string_value(json_object_get(doc, "lo")),
			    json_string_value(json_object_get(doc, "last")),
			    json_number_value(json_object_get(doc,
			    "read_units")),
			    json_number_value(json_object_get(doc,
			    "write_units")),
			    (long long) json_integer_value(json_object_get(doc,
			    "throttled")));
			json_t *keys = json_object_get(doc, "keys");
			print_keys(keys, by_units, "consumed units", false);
			print_keys(keys, by_throttled, "throttled requests",
			    true);
		}
		json_decref(doc);
		wire_response_fini(&resp);
		arena_fini(&a);
	}
	catalog_free(c);
	return rc;
}

/* Key bytes as a JSON string of hex digits. */
static json_t *
hex_json(const uint8_t *b, size_t n)
{
	char kb[2 * PART_KEY_MAX + 1];
	for (size_t i = 0; i < n && i < PART_KEY_MAX; i++)
		snprintf(kb + 2 * i, 3, "%02x", b[i]);
	kb[2 * (n < PART_KEY_MAX ? n : PART_KEY_MAX)] = '\0';
	return json_string(kb);
}

static char *
hex64(uint64_t v, char buf[17])
{
	snprintf(buf, 17, "%016" PRIx64, v);
	return buf;
}

int
admin_status_json(const config *cfg, rpc_client **nodes, members *mb)
{
	sample s[2];
	sample_take(nodes, mb, &s[0]);
	sleep(1);
	sample_take(nodes, mb, &s[1]);
	double dt = s[1].t - s[0].t;
	json_t *doc = json_object(), *jn = json_array(), *jt = json_array();
	char h1[17], h2[17];
	int rc = 0;

	for (size_t i = 0; i < cfg->n_nodes; i++) {
		const survey_result *r = &s[1].res[i];
		json_t *o = json_object();
		json_object_set_new(o, "index", json_integer((json_int_t) i));
		json_object_set_new(o, "url", json_string(cfg->nodes[i].url));
		json_object_set_new(o, "up", json_boolean(r->outcome ==
		    SURVEY_ANSWERED));
		if (r->outcome == SURVEY_ANSWERED) {
			json_object_set_new(o, "partitions", json_integer(
			    (json_int_t) r->m.n_stats));
			json_object_set_new(o, "catalog_version",
			    json_integer((json_int_t) r->m.catalog_version));
		}
		json_array_append_new(jn, o);
	}
	if (s[1].cat == NULL) {
		rc = 1;
		json_object_set_new(doc, "catalog", json_null());
	} else {
		json_object_set_new(doc, "catalog_version", json_integer(
		    (json_int_t) s[1].cat->version));
	}
	for (size_t t = 0; s[1].cat != NULL && t < s[1].cat->n_tables; t++) {
		const table *tb = &s[1].cat->tables[t];
		json_t *o = json_object(), *parts = json_array();
		json_object_set_new(o, "name", json_string(tb->name));
		json_object_set_new(o, "id", json_integer(tb->id));
		json_object_set_new(o, "status", json_string(
		    tb->status == TABLE_CREATING ? "CREATING" :
		    tb->status == TABLE_DELETING ? "DELETING" :
		    tb->status == TABLE_UPDATING ? "UPDATING" : "ACTIVE"));
		json_object_set_new(o, "billing", json_string(
		    tb->billing == BILLING_PROVISIONED ? "PROVISIONED" :
		    "PAY_PER_REQUEST"));
		if (tb->billing == BILLING_PROVISIONED) {
			json_object_set_new(o, "rcu", json_integer(
			    (json_int_t) tb->rcu));
			json_object_set_new(o, "wcu", json_integer(
			    (json_int_t) tb->wcu));
		}
		for (size_t p = 0; p < tb->n_parts; p++) {
			const partition *pp = &tb->parts[p];
			json_t *jp = json_object();
			json_object_set_new(jp, "id", json_integer(pp->id));
			json_object_set_new(jp, "lo", json_string(hex64(pp->lo,
			    h1)));
			json_object_set_new(jp, "last", json_string(
			    hex64(pp->last, h2)));
			json_object_set_new(jp, "node", json_integer(pp->node));
			if (pp->keyed) {
				/* The sort-key range, as storage-key bytes
				 * after the prefix (hex; "" open). */
				json_object_set_new(jp, "key_from",
				    hex_json(pp->kfrom, pp->kfrom_len));
				json_object_set_new(jp, "key_to",
				    hex_json(pp->kto, pp->kto_len));
			}
			json_object_set_new(jp, "epoch", json_integer(
			    (json_int_t) pp->epoch));
			const part_stats *a = find_stats(&s[1], pp->node,
			    tb->id, pp->id);
			const part_stats *b = find_stats(&s[0], pp->node,
			    tb->id, pp->id);
			part_stats zero = { 0 };
			if (b == NULL)
				b = &zero;
			json_object_set_new(jp, "served", json_boolean(a !=
			    NULL));
			if (a != NULL) {
				json_object_set_new(jp, "owner_epoch",
				    json_integer((json_int_t) a->epoch));
				json_object_set_new(jp, "items", json_integer(
				    (json_int_t) a->items));
				json_object_set_new(jp, "bytes", json_integer(
				    (json_int_t) a->bytes));
				json_object_set_new(jp, "rcu_per_s", json_real(
				    rate(a->read_charged, b->read_charged,
				    dt) / 2));
				json_object_set_new(jp, "wcu_per_s", json_real(
				    rate(a->write_charged, b->write_charged,
				    dt) / 2));
				json_object_set_new(jp, "read_throttled_per_s",
				    json_real(rate(a->read_throttled,
				    b->read_throttled, dt)));
				json_object_set_new(jp,
				    "write_throttled_per_s", json_real(rate(
				    a->write_throttled, b->write_throttled,
				    dt)));
				json_object_set_new(jp, "read_consumed",
				    json_real((double) a->read_charged / 2));
				json_object_set_new(jp, "write_consumed",
				    json_real((double) a->write_charged / 2));
				json_object_set_new(jp, "read_throttled",
				    json_integer((json_int_t)
				    a->read_throttled));
				json_object_set_new(jp, "write_throttled",
				    json_integer((json_int_t)
				    a->write_throttled));
				json_object_set_new(jp, "read_ceiling",
				    json_real((double) a->read_rate / 2e6));
				json_object_set_new(jp, "write_ceiling",
				    json_real((double) a->write_rate / 2e6));
			}
			json_array_append_new(parts, jp);
		}
		json_object_set_new(o, "partitions", parts);
		json_array_append_new(jt, o);
	}
	json_object_set_new(doc, "nodes", jn);
	json_object_set_new(doc, "tables", jt);
	json_object_set_new(doc, "rates_over_s", json_real(dt));
	char *out = json_dumps(doc, JSON_INDENT(1));
	if (out != NULL)
		printf("%s\n", out);
	else
		rc = 1;
	free(out);
	json_decref(doc);
	sample_fini(&s[0]);
	sample_fini(&s[1]);
	return rc;
}

int
admin_index(rpc_client *cat, int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[0], "pause") != 0 &&
	    strcmp(argv[0], "resume") != 0)) {
		fprintf(stderr, "kv-admin: index pause|resume TABLE INDEX\n");
		return 2;
	}
	/* The request names the table with its key schema and billing
	 * mode, as any table on the wire has them. */
	catalog *c = get_catalog(cat);
	const table *base = c != NULL ? catalog_find(c, argv[1],
	    strlen(argv[1])) : NULL;
	if (base == NULL) {
		if (c != NULL)
			fprintf(stderr, "kv-admin: no table %s\n", argv[1]);
		catalog_free(c);
		return 1;
	}
	index_def d = { .name = argv[2] };
	table t = { .name = argv[1], .hash = base->hash,
	    .billing = base->billing, .indexes = &d, .n_indexes = 1 };
	rpc_request req = { .op = RPC_INDEX_UPDATE, .table = &t,
	    .limit = strcmp(argv[0], "pause") == 0 ? RPC_INDEX_PAUSE :
	    RPC_INDEX_RESUME };
	arena a;
	rpc_response resp;
	arena_init(&a);
	kv_err rv = ask(cat, &req, TIMEOUT_MS, argv[0], &a, &resp);
	if (rv == KV_OK)
		printf("index %s of %s: replication %s\n", argv[2], argv[1],
		    req.limit == RPC_INDEX_PAUSE ? "paused" : "resumed");
	wire_response_fini(&resp);
	arena_fini(&a);
	catalog_free(c);
	return rv == KV_OK ? 0 : 1;
}
