/*
 * delete.c — RPC_DELETE: remove one item (optionally under a condition).
 * Deleting a missing item succeeds and changes nothing, as in DynamoDB.
 * The write path is in write.c.
 */
#include "expr.h"
#include "node.h"

kv_err
delete_new_item(const rpc_request *req, const expr_update *upd, arena *a,
    const value *old_item, value **out, expr_err *err)
{
	*out = NULL;
	return KV_OK;
}
