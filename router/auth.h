/*
 * auth.h — AWS Signature Version 4 on every request, when the router is
 * started with --auth FILE (off by default: any signature, or none, is
 * taken).
 *
 * FILE holds one "ACCESS_KEY_ID SECRET_ACCESS_KEY" pair a line ('#'
 * starts a comment). A request must carry an Authorization header signed
 * with one of them over its method, path, query, the headers it names
 * (Host among them), the SHA-256 of its body, and an X-Amz-Date within 15
 * minutes of the router's clock, for the dynamodb service, as the AWS
 * SDKs and the CLI sign. The answers for what fails are DynamoDB's:
 * MissingAuthenticationTokenException (no Authorization),
 * IncompleteSignatureException (a part missing),
 * UnrecognizedClientException (an unknown key),
 * InvalidSignatureException (a wrong signature, a wrong scope, a date
 * too far off), all 400. Tables are shared by every key.
 */
#ifndef KV_ROUTER_AUTH_H
#define KV_ROUTER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "err.h"
#include "router.h"

typedef struct auth_key {
	char id[129];
	char secret[129];
} auth_key;

typedef struct auth_keys {
	auth_key *k;
	size_t n;
} auth_keys;

/* auth_load reads FILE into *out (free with auth_free). KV_OK, or KV_IO
 * / KV_EINVAL with why set. */
kv_err auth_load(const char *path, auth_keys **out, char *why,
    size_t whylen);

void auth_free(auth_keys *keys);

/*
 * auth_check verifies the request whose head (request line and headers,
 * up to and including the empty line) is head[0..head_len) and whose
 * body is body[0..body_len), at time now: true when it is signed; false
 * with DynamoDB's error in *out.
 */
bool auth_check(const auth_keys *keys, const char *head, size_t head_len,
    const char *body, size_t body_len, time_t now, reply *out);

#endif
