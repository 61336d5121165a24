/*
 * put.c — RPC_PUT: replace one item (optionally under a condition). The
 * write path itself, shared with DELETE and UPDATE, is in write.c; this
 * file only says what the new item is.
 */
#include "codec.h"
#include "expr.h"
#include "node.h"

kv_err
put_new_item(const rpc_request *req, const expr_update *upd, arena *a,
    const value *old_item, value **out, expr_err *err)
{
	value *v = arena_alloc(a, sizeof(*v));
	if (v == NULL)
		return KV_ENOMEM;
	if (codec_decode(a, req->item, req->item_len, v) != KV_OK ||
	    v->type != VAL_M)
		return KV_PROTO;
	*out = v;
	return KV_OK;
}
