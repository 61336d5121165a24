/*
 * ops_tags.c — TagResource, UntagResource and ListTagsOfResource, and the
 * Tags of CreateTable.
 *
 * A table's tags live in its catalog entry (catalog.h), changed by the
 * catalog node (RPC_TAGS), so every router lists the same. DynamoDB's
 * rules: a resource is named by its ARN ("arn:aws:dynamodb:REGION:
 * ACCOUNT:table/NAME"; any region and account are taken here, the
 * cluster being one of each); at most 50 tags; a key of 1 to 128
 * characters, a value of 0 to 256, both of letters, digits, white space
 * and _ . : / = + - @; keys beginning "aws:" are AWS's own. Setting a key
 * again replaces its value; removing an absent key is no error. Since
 * August 2024 DynamoDB applies tag changes a few seconds late; here they
 * are in place when the answer leaves.
 *
 * The messages for a malformed ARN, an unknown table and a missing ARN
 * are DynamoDB's (the unknown table's "ResourcArn" included); those for
 * tags over the limits are in DynamoDB's validation style, with the
 * wording of the reserved prefix and the count ours.
 */
#include <string.h>

#include "conn.h"
#include "errors.h"
#include "ops_table.h"
#include "request.h"
#include "route.h"

#define TAG_KEY_MAX 128
#define TAG_VALUE_MAX 256

/* Whether s holds only characters a tag may have. */
static bool
tag_chars_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
		if (!(*p >= 0x80 || (*p >= 'a' && *p <= 'z') ||
		    (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr(" \t_.:/=+-@", *p) != NULL))
			return false;
	return true;
}

/* The length of UTF-8 s in characters. */
static size_t
chars(const char *s)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
		n += (*p & 0xC0) != 0x80;
	return n;
}

bool
ops_tags_read(api_ctx *c, json_t *body, const char *member, bool required,
    table_tag **tags, size_t *n, reply *out)
{
	json_t *list;
	req_errors e = { 0 };
	*tags = NULL;
	*n = 0;
	if (!req_array(body, member, &list, out))
		return false;
	if (list == NULL) {
		if (!required)
			return true;
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value null at 'tags' failed to satisfy constraint: Member "
		    "must not be null");
		return false;
	}
	size_t count = json_array_size(list);
	if (count == 0 && required) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value '[]' at 'tags' failed to satisfy constraint: Member "
		    "must have length greater than or equal to 1");
		return false;
	}
	if (count > TABLE_MAX_TAGS) {
		errors_reply(out, ERR_VALIDATION, "One or more parameter values "
		    "were invalid: The number of tags on the resource would "
		    "exceed the limit of %d", TABLE_MAX_TAGS);
		return false;
	}
	*tags = arena_alloc(c->a, (count + 1) * sizeof(table_tag));
	if (*tags == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	for (size_t i = 0; i < count; i++) {
		json_t *tj = json_array_get(list, i);
		const char *k, *v;
		if (!json_is_object(tj)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload");
			return false;
		}
		if (!req_string(tj, "Key", &k, out) ||
		    !req_string(tj, "Value", &v, out))
			return false;
		if (k == NULL)
			req_errors_add(&e, "Value null at 'tags.%zu.member.key' "
			    "failed to satisfy constraint: Member must not be "
			    "null", i + 1);
		else if (chars(k) < 1 || chars(k) > TAG_KEY_MAX)
			req_errors_add(&e, "Value '%s' at 'tags.%zu.member.key' "
			    "failed to satisfy constraint: Member must have "
			    "length %s", k, i + 1, chars(k) < 1 ?
			    "greater than or equal to 1" :
			    "less than or equal to 128");
		else if (!tag_chars_ok(k))
			req_errors_add(&e, "Value '%s' at 'tags.%zu.member.key' "
			    "failed to satisfy constraint: Member must satisfy "
			    "regular expression pattern: "
			    "^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$", k, i + 1);
		if (v == NULL)
			req_errors_add(&e, "Value null at "
			    "'tags.%zu.member.value' failed to satisfy "
			    "constraint: Member must not be null", i + 1);
		else if (chars(v) > TAG_VALUE_MAX)
			req_errors_add(&e, "Value '%s' at "
			    "'tags.%zu.member.value' failed to satisfy "
			    "constraint: Member must have length less than or "
			    "equal to 256", v, i + 1);
		else if (!tag_chars_ok(v))
			req_errors_add(&e, "Value '%s' at "
			    "'tags.%zu.member.value' failed to satisfy "
			    "constraint: Member must satisfy regular expression "
			    "pattern: ^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$", v,
			    i + 1);
		(*tags)[i] = (table_tag) { (char *) k, (char *) v };
	}
	if (req_errors_reply(&e, out))
		return false;
	for (size_t i = 0; i < count; i++)
		if (strncmp((*tags)[i].key, "aws:", 4) == 0) {
			errors_reply(out, ERR_VALIDATION, "One or more parameter "
			    "values were invalid: Tag keys starting with 'aws:' "
			    "are reserved for system use");
			return false;
		}
	*n = count;
	return true;
}

/*
 * Reads ResourceArn and finds its table's name: true with *name (in the
 * arena); false after answering (a missing or malformed ARN).
 */
static bool
arn_table(api_ctx *c, json_t *body, const char **arn, const char **name,
    reply *out)
{
	if (!req_string(body, "ResourceArn", arn, out))
		return false;
	if (*arn == NULL) {
		errors_reply(out, ERR_VALIDATION, "Invalid TableArn");
		return false;
	}
	if (strncmp(*arn, "arn:", 4) != 0) {
		errors_reply(out, ERR_VALIDATION, "Invalid ResourceArn provided "
		    "as input %s: ARNs must start with 'arn:'", *arn);
		return false;
	}
	/* arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME */
	const char *p = *arn;
	for (int colon = 0; colon < 5 && p != NULL; colon++) {
		p = strchr(p, ':');
		if (p != NULL)
			p++;
	}
	if (p == NULL || strncmp(p, "table/", 6) != 0 || p[6] == '\0' ||
	    strchr(p + 6, '/') != NULL) {
		errors_reply(out, ERR_VALIDATION, "Invalid TableArn: Invalid "
		    "ResourceArn provided as input %s", *arn);
		return false;
	}
	*name = arena_dup(c->a, p + 6, strlen(p + 6) + 1);
	if (*name == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	return true;
}

static void
arn_not_found(reply *out, const char *arn)
{
	errors_reply(out, ERR_RESOURCE_NOT_FOUND, "Requested resource not "
	    "found: ResourcArn: %s not found", arn);
}

/* Asks the catalog node for change `what` of name's tags. */
static void
change(api_ctx *c, const char *arn, const char *name, int what,
    table_tag *tags, size_t n, reply *out)
{
	table t;
	ops_change_table(&t, name, BILLING_PAY_PER_REQUEST);
	t.tags = tags;
	t.n_tags = n;
	rpc_request req = { .op = RPC_TAGS, .table = &t, .limit = what };
	rpc_response resp;
	kv_err rv = conn_call(c->r, 0, &req, c->a, &resp);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	if (resp.code == KV_NO_TABLE) {
		wire_response_fini(&resp);
		arn_not_found(out, arn);
		return;
	}
	if (!ops_change_ok(&resp, name, NULL, out))
		return;
	wire_response_fini(&resp);
	api_reply_json(out, json_object()); /* no members to answer */
}

void
ops_tags_tag(api_ctx *c, json_t *body, reply *out)
{
	const char *arn, *name;
	table_tag *tags;
	size_t n;
	if (!arn_table(c, body, &arn, &name, out) ||
	    !ops_tags_read(c, body, "Tags", true, &tags, &n, out))
		return;
	change(c, arn, name, RPC_TAGS_SET, tags, n, out);
}

void
ops_tags_untag(api_ctx *c, json_t *body, reply *out)
{
	const char *arn, *name;
	json_t *keys;
	if (!arn_table(c, body, &arn, &name, out) ||
	    !req_array(body, "TagKeys", &keys, out))
		return;
	if (keys == NULL) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value null at 'tagKeys' failed to satisfy constraint: "
		    "Member must not be null");
		return;
	}
	size_t n = json_array_size(keys);
	table_tag *tags = arena_alloc(c->a, (n + 1) * sizeof(*tags));
	if (tags == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *k = json_array_get(keys, i);
		if (!json_is_string(k)) {
			errors_reply(out, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload");
			return;
		}
		tags[i] = (table_tag) { (char *) json_string_value(k),
		    (char *) "" };
	}
	change(c, arn, name, RPC_TAGS_REMOVE, tags, n, out);
}

void
ops_tags_list(api_ctx *c, json_t *body, reply *out)
{
	const char *arn, *name, *next;
	if (!arn_table(c, body, &arn, &name, out) ||
	    !req_string(body, "NextToken", &next, out))
		return;
	kv_err rv = route_refresh(c->r);
	if (rv != KV_OK) {
		errors_from_kv(out, rv);
		return;
	}
	route_read_lock();
	const table *t = catalog_find(route_current(c->r), name,
	    strlen(name));
	json_t *list = json_array();
	for (size_t i = 0; t != NULL && i < t->n_tags; i++)
		json_array_append_new(list, json_pack("{s:s,s:s}", "Key",
		    t->tags[i].key, "Value", t->tags[i].value));
	route_read_unlock();
	if (t == NULL) {
		json_decref(list);
		arn_not_found(out, arn);
		return;
	}
	/* At most 50 tags: one page, no NextToken. */
	api_reply_json(out, json_pack("{s:o}", "Tags", list));
}
