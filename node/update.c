/*
 * update.c — RPC_UPDATE: apply an update expression to one item, creating
 * the item when it does not exist, as UpdateItem does. A missing item
 * starts as its key attributes (carried in req->item), so the created item
 * has its key and the update's attributes; an update that only removes
 * leaves a missing item missing. The write path is in write.c.
 */
#include "codec.h"
#include "expr.h"
#include "node.h"

kv_err
update_new_item(const rpc_request *req, const expr_update *upd, arena *a,
    const value *old_item, value **out, expr_err *err)
{
	value key, *v = arena_alloc(a, sizeof(*v));
	if (v == NULL)
		return KV_ENOMEM;
	if (upd == NULL)
		return KV_PROTO;
	if (old_item == NULL) {
		/*
		 * An update that only removes (REMOVE, DELETE from a set, or
		 * the legacy DELETE) does not create a missing item, as in
		 * DynamoDB: there is nothing to remove from.
		 */
		bool only_removes = upd->n > 0;
		for (size_t i = 0; i < upd->n; i++)
			only_removes &= upd->actions[i].kind == EXPR_ACT_REMOVE ||
			    upd->actions[i].kind == EXPR_ACT_DELETE;
		if (only_removes) {
			*out = NULL;
			return KV_OK;
		}
		if (codec_decode(a, req->item, req->item_len, &key) != KV_OK ||
		    key.type != VAL_M)
			return KV_PROTO;
		old_item = &key;
	}
	kv_err rv = expr_apply_update(a, upd, old_item, v, err);
	if (rv != KV_OK)
		return rv;
	*out = v;
	return KV_OK;
}
