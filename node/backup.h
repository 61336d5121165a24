/*
 * backup.h — on-demand backups (CreateBackup, RestoreTableFromBackup).
 *
 * A backup is a point-in-time copy of each partition of a table, kept by
 * the node that owned the partition when the copy was taken, in its own
 * store under the node's metadata prefix:
 *
 *   {0, 0, 0, 0, 'B'}, the backup's id (8, big-endian), then the item's
 *   storage key without its table id (hash, keys: core/keyenc.h)
 *
 * so a backup's copy of one partition is one contiguous range, and its
 * whole copy on a node another (dropped with one range deletion). Each
 * partition is copied from one store snapshot (store_scan_snap), so it
 * holds exactly the writes acknowledged before its copy began; the
 * partitions of a table are copied one after the other, within a second
 * or so of each other, which is what DynamoDB promises too ("consistent
 * within seconds"). Local index entries and collection sizes are in the
 * range and come along; global indexes are not copied: a restore fills
 * them again from the restored items.
 *
 * The catalog node keeps the backups' records ({0, 0, 0, 0, 'D'} and the
 * id; wire_pack_backup) and drives the copies from its worker
 * (catalog_backup.c):
 *   - CreateBackup writes the record CREATING and answers; the worker asks
 *     each owner to copy its partitions (RPC_BACKUP_TAKE, which first
 *     removes any copy a failed attempt left) and, once every partition
 *     is copied, records the partitions it copied, the sizes, AVAILABLE.
 *     An owner that no longer holds a partition as the catalog said (a
 *     move or a split meanwhile) refuses, and the worker tries again with
 *     the catalog of then. A catalog node that dies in the middle finds
 *     the record CREATING at its start and starts over.
 *   - RestoreTableFromBackup creates the new table CREATING, with the
 *     backup's partitions, each placed on the node that holds its copy,
 *     and restore_arn set; the worker assigns them, asks each owner to
 *     fill its partitions from the copy (RPC_BACKUP_RESTORE: clear, copy
 *     with the new table's id, count), and only then makes the table
 *     ACTIVE, so a restore cut short is done again from the start. Its
 *     global indexes are created backfilling and filled once the table
 *     is ACTIVE (index.h).
 *   - DeleteBackup records DELETED; the worker tells every node to drop
 *     its copy (RPC_BACKUP_DROP) and then removes the record.
 *
 * Restore places a partition on the node that holds its copy: a backup
 * taken on a node that has left the cluster cannot be restored.
 */
#ifndef KV_BACKUP_H
#define KV_BACKUP_H

#include "arena.h"
#include "wire.h"

typedef struct node node;

#define BACKUP_KEY_PREFIX 13 /* {0,0,0,0,'B'} and the id */

/* The owner's verbs: RPC_BACKUP_TAKE, RPC_BACKUP_RESTORE, RPC_BACKUP_DROP
 * (wire.h). */
void backup_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/* The catalog node's verb, RPC_BACKUP (wire.h's RPC_BACKUP_*). */
void catalog_backup_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * catalog_backup_open loads the backups' records (called by
 * catalog_node_open, before the worker starts); catalog_backup_close frees
 * them. KV_OK, KV_IO, KV_CORRUPT or KV_ENOMEM.
 */
kv_err catalog_backup_open(node *n);
void catalog_backup_close(node *n);

/*
 * The worker's share: takes the copies of CREATING backups and removes
 * DELETED ones. Returns true when something is left to do (try again
 * soon); catalog_state.backups_due says whether any backup waits.
 */
bool catalog_backup_work(node *n);

/*
 * catalog_backup_restore fills the partitions of table t (CREATING, with
 * restore_arn) from its backup, on every owner. KV_OK once all are full.
 */
kv_err catalog_backup_restore(node *n, const table *t);

#endif
