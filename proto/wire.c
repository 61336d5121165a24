/*
 * wire.c — conversion between wire.h's structs and kv.proto (protobuf-c).
 *
 * Packing borrows our structs into protobuf messages on the stack (no
 * copies of item bytes); unpacking copies what it needs into the caller's
 * arena or into owned catalog structures and frees the protobuf message
 * before returning. Read wire.h first.
 */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

#include "wire_int.h"


static void
keydef_to_pb(const key_def *k, Kv__KeyDef *pb)
{
	kv__key_def__init(pb);
	pb->name = k->name != NULL ? k->name : (char *) "";
	pb->type = (uint32_t) k->type;
}

kv_err
wire_table_to_pb(const table *t, pb_table_buf *b)
{
	memset(b, 0, sizeof(*b));
	kv__table__init(&b->t);
	b->t.name = t->name != NULL ? t->name : (char *) "";
	b->t.id = t->id;
	b->t.uuid = t->uuid != NULL ? t->uuid : (char *) "";
	keydef_to_pb(&t->hash, &b->hash);
	b->t.hash = &b->hash;
	if (t->range.name != NULL) {
		keydef_to_pb(&t->range, &b->range);
		b->t.range = &b->range;
	}
	if (t->n_attr_defs > 0) {
		b->defs = calloc(t->n_attr_defs, sizeof(*b->defs));
		b->defp = calloc(t->n_attr_defs, sizeof(*b->defp));
		if (b->defs == NULL || b->defp == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < t->n_attr_defs; i++) {
			keydef_to_pb(&t->attr_defs[i], &b->defs[i]);
			b->defp[i] = &b->defs[i];
		}
		b->t.n_attr_defs = t->n_attr_defs;
		b->t.attr_defs = b->defp;
	}
	b->t.billing = t->billing;
	b->t.rcu = t->rcu;
	b->t.wcu = t->wcu;
	b->t.status = t->status;
	b->t.created_ms = t->created_ms;
	b->t.last_increase_ms = t->last_increase_ms;
	b->t.last_decrease_ms = t->last_decrease_ms;
	b->t.decreases_today = t->decreases_today;
	b->t.decreases_day = t->decreases_day;
	b->t.billing_changed_ms = t->billing_changed_ms;
	b->t.base_id = t->base_id;
	b->t.backfilling = t->backfilling;
	b->t.paused = t->paused;
	b->t.ttl_attr = t->ttl_attr != NULL ? t->ttl_attr : (char *) "";
	b->t.restore_arn = t->restore_arn != NULL ? t->restore_arn :
	    (char *) "";
	b->t.restore_ms = t->restore_ms;
	if (t->n_indexes > 0) {
		b->idx = calloc(t->n_indexes, sizeof(*b->idx));
		b->idxp = calloc(t->n_indexes, sizeof(*b->idxp));
		b->idx_keys = calloc(2 * INDEX_KEY_PARTS * t->n_indexes,
		    sizeof(*b->idx_keys));
		b->idx_more = calloc(2 * INDEX_KEY_PARTS * t->n_indexes,
		    sizeof(*b->idx_more));
		if (b->idx == NULL || b->idxp == NULL || b->idx_keys == NULL ||
		    b->idx_more == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < t->n_indexes; i++) {
			const index_def *d = &t->indexes[i];
			Kv__IndexDef *x = &b->idx[i];
			kv__index_def__init(x);
			x->name = d->name != NULL ? d->name : (char *) "";
			x->local = d->local;
			x->table_id = d->table_id;
			Kv__KeyDef *k = &b->idx_keys[2 * INDEX_KEY_PARTS * i];
			Kv__KeyDef **m = &b->idx_more[2 * INDEX_KEY_PARTS * i];
			if (d->hash.name != NULL) {
				keydef_to_pb(&d->hash, &k[0]);
				x->hash = &k[0];
			}
			if (d->range.name != NULL) {
				keydef_to_pb(&d->range, &k[1]);
				x->range = &k[1];
			}
			x->hash_more = m;
			for (size_t j = 0; j < d->n_hmore; j++) {
				keydef_to_pb(&d->hmore[j], &k[2 + j]);
				m[x->n_hash_more++] = &k[2 + j];
			}
			x->range_more = m + INDEX_KEY_PARTS;
			for (size_t j = 0; j < d->n_rmore; j++) {
				keydef_to_pb(&d->rmore[j], &k[2 + INDEX_KEY_PARTS +
				    j]);
				m[INDEX_KEY_PARTS + x->n_range_more++] =
				    &k[2 + INDEX_KEY_PARTS + j];
			}
			x->projection = (uint32_t) d->projection;
			x->n_include = d->n_include;
			x->include = d->include;
			x->rcu = d->rcu;
			x->wcu = d->wcu;
			x->deleting = d->deleting;
			b->idxp[i] = x;
		}
		b->t.n_indexes = t->n_indexes;
		b->t.indexes = b->idxp;
	}
	if (t->n_parts > 0) {
		b->parts = calloc(t->n_parts, sizeof(*b->parts));
		b->partp = calloc(t->n_parts, sizeof(*b->partp));
		if (b->parts == NULL || b->partp == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < t->n_parts; i++) {
			Kv__Partition *p = &b->parts[i];
			kv__partition__init(p);
			p->id = t->parts[i].id;
			p->lo = t->parts[i].lo;
			p->last = t->parts[i].last;
			p->node = t->parts[i].node;
			p->epoch = t->parts[i].epoch;
			p->keyed = t->parts[i].keyed;
			p->kfrom.data = (uint8_t *) t->parts[i].kfrom;
			p->kfrom.len = t->parts[i].kfrom_len;
			p->kto.data = (uint8_t *) t->parts[i].kto;
			p->kto.len = t->parts[i].kto_len;
			b->partp[i] = p;
		}
		b->t.n_parts = t->n_parts;
		b->t.parts = b->partp;
	}
	if (t->n_tags > 0) {
		b->tags = calloc(t->n_tags, sizeof(*b->tags));
		b->tagp = calloc(t->n_tags, sizeof(*b->tagp));
		if (b->tags == NULL || b->tagp == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < t->n_tags; i++) {
			kv__tag__init(&b->tags[i]);
			b->tags[i].key = t->tags[i].key;
			b->tags[i].value = t->tags[i].value;
			b->tagp[i] = &b->tags[i];
		}
		b->t.n_tags = t->n_tags;
		b->t.tags = b->tagp;
	}
	return KV_OK;
}

void
wire_table_buf_fini(pb_table_buf *b)
{
	free(b->defs);
	free(b->defp);
	free(b->parts);
	free(b->partp);
	free(b->idx);
	free(b->idxp);
	free(b->tags);
	free(b->tagp);
	free(b->idx_keys);
	free(b->idx_more);
}

static kv_err
keydef_from_pb(const Kv__KeyDef *pb, key_def *k)
{
	if (pb == NULL || pb->type < VAL_S || pb->type > VAL_B)
		return KV_PROTO;
	k->name = strdup(pb->name);
	if (k->name == NULL)
		return KV_ENOMEM;
	k->type = (val_type) pb->type;
	return KV_OK;
}

/* Protobuf -> owned index definition; on failure *d is finalised. */
static kv_err
index_def_from_pb(const Kv__IndexDef *pb, index_def *d)
{
	kv_err rv;
	memset(d, 0, sizeof(*d));
	/* A request that only names an index (delete, pause) has neither
	 * keys nor projection. */
	if (pb->projection > PROJECT_INCLUDE)
		return KV_PROTO;
	if ((d->name = strdup(pb->name)) == NULL)
		return KV_ENOMEM;
	d->local = pb->local;
	d->table_id = pb->table_id;
	d->projection = (index_projection) pb->projection;
	d->rcu = pb->rcu;
	d->wcu = pb->wcu;
	d->deleting = pb->deleting;
	if ((pb->hash != NULL &&
	    (rv = keydef_from_pb(pb->hash, &d->hash)) != KV_OK) ||
	    (pb->range != NULL &&
	    (rv = keydef_from_pb(pb->range, &d->range)) != KV_OK))
		goto fail;
	rv = KV_PROTO;
	if (pb->n_hash_more >= INDEX_KEY_PARTS ||
	    pb->n_range_more >= INDEX_KEY_PARTS ||
	    (pb->n_hash_more > 0 && d->hash.name == NULL) ||
	    (pb->n_range_more > 0 && d->range.name == NULL))
		goto fail;
	for (size_t j = 0; j < pb->n_hash_more; j++) {
		if ((rv = keydef_from_pb(pb->hash_more[j], &d->hmore[j])) !=
		    KV_OK)
			goto fail;
		d->n_hmore = (uint8_t) (j + 1);
	}
	for (size_t j = 0; j < pb->n_range_more; j++) {
		if ((rv = keydef_from_pb(pb->range_more[j], &d->rmore[j])) !=
		    KV_OK)
			goto fail;
		d->n_rmore = (uint8_t) (j + 1);
	}
	if (pb->n_include > 0) {
		rv = KV_ENOMEM;
		if ((d->include = calloc(pb->n_include, sizeof(char *))) ==
		    NULL)
			goto fail;
		for (size_t i = 0; i < pb->n_include; i++) {
			if ((d->include[i] = strdup(pb->include[i])) == NULL)
				goto fail;
			d->n_include = i + 1;
		}
	}
	return KV_OK;
fail:
	index_def_fini(d);
	return rv;
}


/* Protobuf -> owned table. On failure *t is finalised. */
kv_err
wire_table_from_pb(const Kv__Table *pb, table *t)
{
	kv_err rv;
	memset(t, 0, sizeof(*t));
	t->name = strdup(pb->name);
	t->uuid = strdup(pb->uuid);
	if (t->name == NULL || t->uuid == NULL) {
		rv = KV_ENOMEM;
		goto fail;
	}
	t->id = pb->id;
	if ((rv = keydef_from_pb(pb->hash, &t->hash)) != KV_OK)
		goto fail;
	if (pb->range != NULL &&
	    (rv = keydef_from_pb(pb->range, &t->range)) != KV_OK)
		goto fail;
	if (pb->n_attr_defs > 0) {
		t->attr_defs = calloc(pb->n_attr_defs, sizeof(key_def));
		if (t->attr_defs == NULL) {
			rv = KV_ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < pb->n_attr_defs; i++) {
			rv = keydef_from_pb(pb->attr_defs[i], &t->attr_defs[i]);
			if (rv != KV_OK)
				goto fail;
			t->n_attr_defs = i + 1;
		}
	}
	if (pb->billing < BILLING_PROVISIONED ||
	    pb->billing > BILLING_PAY_PER_REQUEST ||
	    (pb->status != 0 && (pb->status < TABLE_CREATING ||
	    pb->status > TABLE_UPDATING))) {
		rv = KV_PROTO;
		goto fail;
	}
	t->billing = (billing_mode) pb->billing;
	t->rcu = pb->rcu;
	t->wcu = pb->wcu;
	t->status = (table_status) pb->status;
	t->created_ms = pb->created_ms;
	t->last_increase_ms = pb->last_increase_ms;
	t->last_decrease_ms = pb->last_decrease_ms;
	t->decreases_today = pb->decreases_today;
	t->decreases_day = pb->decreases_day;
	t->billing_changed_ms = pb->billing_changed_ms;
	t->base_id = pb->base_id;
	t->backfilling = pb->backfilling;
	t->paused = pb->paused;
	if (pb->ttl_attr != NULL && pb->ttl_attr[0] != '\0' &&
	    (t->ttl_attr = strdup(pb->ttl_attr)) == NULL) {
		rv = KV_ENOMEM;
		goto fail;
	}
	t->restore_ms = pb->restore_ms;
	if (pb->restore_arn != NULL && pb->restore_arn[0] != '\0' &&
	    (t->restore_arn = strdup(pb->restore_arn)) == NULL) {
		rv = KV_ENOMEM;
		goto fail;
	}
	if (pb->n_tags > 0) {
		t->tags = calloc(pb->n_tags, sizeof(table_tag));
		if (t->tags == NULL) {
			rv = KV_ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < pb->n_tags; i++) {
			t->tags[i].key = strdup(pb->tags[i]->key);
			t->tags[i].value = strdup(pb->tags[i]->value);
			t->n_tags = i + 1;
			if (t->tags[i].key == NULL || t->tags[i].value == NULL) {
				rv = KV_ENOMEM;
				goto fail;
			}
		}
	}
	if (pb->n_indexes > 0) {
		t->indexes = calloc(pb->n_indexes, sizeof(index_def));
		if (t->indexes == NULL) {
			rv = KV_ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < pb->n_indexes; i++) {
			rv = index_def_from_pb(pb->indexes[i], &t->indexes[i]);
			if (rv != KV_OK)
				goto fail;
			t->n_indexes = i + 1;
		}
	}
	if (pb->n_parts > 0) {
		t->parts = calloc(pb->n_parts, sizeof(partition));
		if (t->parts == NULL) {
			rv = KV_ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < pb->n_parts; i++) {
			const Kv__Partition *p = pb->parts[i];
			t->parts[i].id = p->id;
			t->parts[i].lo = p->lo;
			t->parts[i].last = p->last;
			t->parts[i].node = p->node;
			t->parts[i].epoch = p->epoch;
			t->parts[i].keyed = p->keyed;
			if (p->kfrom.len > PART_KEY_MAX ||
			    p->kto.len > PART_KEY_MAX) {
				rv = KV_PROTO;
				goto fail;
			}
			t->parts[i].kfrom_len = (uint8_t) p->kfrom.len;
			t->parts[i].kto_len = (uint8_t) p->kto.len;
			if (p->kfrom.len > 0)
				memcpy(t->parts[i].kfrom, p->kfrom.data,
				    p->kfrom.len);
			if (p->kto.len > 0)
				memcpy(t->parts[i].kto, p->kto.data,
				    p->kto.len);
		}
		t->n_parts = pb->n_parts;
		if (!table_parts_valid(t)) {
			rv = KV_PROTO;
			goto fail;
		}
	}
	return KV_OK;
fail:
	table_fini(t);
	return rv;
}

/* Catalog -> protobuf. */
typedef struct pb_catalog_buf {
	Kv__Catalog c;
	pb_table_buf *tables;
	Kv__Table **tablep;
	size_t n;
} pb_catalog_buf;

static void
catalog_buf_fini(pb_catalog_buf *b)
{
	for (size_t i = 0; i < b->n; i++)
		wire_table_buf_fini(&b->tables[i]);
	free(b->tables);
	free(b->tablep);
}

static kv_err
catalog_to_pb(const catalog *c, pb_catalog_buf *b)
{
	memset(b, 0, sizeof(*b));
	kv__catalog__init(&b->c);
	b->c.version = c->version;
	b->c.next_table_id = c->next_table_id;
	if (c->n_tables == 0)
		return KV_OK;
	b->tables = calloc(c->n_tables, sizeof(*b->tables));
	b->tablep = calloc(c->n_tables, sizeof(*b->tablep));
	if (b->tables == NULL || b->tablep == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < c->n_tables; i++) {
		b->n = i + 1;
		kv_err rv = wire_table_to_pb(&c->tables[i], &b->tables[i]);
		if (rv != KV_OK)
			return rv;
		b->tablep[i] = &b->tables[i].t;
	}
	b->c.n_tables = c->n_tables;
	b->c.tables = b->tablep;
	return KV_OK;
}

static kv_err
catalog_from_pb(const Kv__Catalog *pb, catalog **out)
{
	catalog *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return KV_ENOMEM;
	c->version = pb->version;
	c->next_table_id = pb->next_table_id;
	if (pb->n_tables > 0) {
		c->tables = calloc(pb->n_tables, sizeof(table));
		if (c->tables == NULL) {
			catalog_free(c);
			return KV_ENOMEM;
		}
		for (size_t i = 0; i < pb->n_tables; i++) {
			kv_err rv = wire_table_from_pb(pb->tables[i], &c->tables[i]);
			if (rv != KV_OK) {
				catalog_free(c);
				return rv;
			}
			c->n_tables = i + 1;
		}
	}
	*out = c;
	return KV_OK;
}

/* Packs any message into owned bytes. */
kv_err
wire_pack_pb(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(n > 0 ? n : 1);
	if (buf == NULL)
		return KV_ENOMEM;
	protobuf_c_message_pack(m, buf);
	*out = buf;
	*len = n;
	return KV_OK;
}

const uint8_t *
wire_copy_bytes(arena *a, const ProtobufCBinaryData *d, size_t *len)
{
	*len = d->len;
	if (d->len == 0 || d->data == NULL) {
		*len = 0;
		return NULL;
	}
	return (const uint8_t *) arena_dup(a, d->data, d->len);
}

/*
 * A list of byte strings as protobuf's repeated bytes; *out is owned (free
 * with free()) and borrows the strings. NULL when n is 0.
 */
static kv_err
bytes_to_pb(const uint8_t *const *p, const size_t *lens, size_t n,
    ProtobufCBinaryData **out)
{
	*out = NULL;
	if (n == 0)
		return KV_OK;
	if ((*out = calloc(n, sizeof(**out))) == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*out)[i].data = (uint8_t *) p[i];
		(*out)[i].len = lens[i];
	}
	return KV_OK;
}

/*
 * Copies repeated bytes into a (valid until arena_fini). An empty string
 * is KV_PROTO unless allow_empty (a packed message may be empty; an item
 * never is: an M has a type byte).
 */
static kv_err
bytes_from_pb(arena *a, const ProtobufCBinaryData *pb, size_t n,
    bool allow_empty, const uint8_t ***p, size_t **lens)
{
	if (n == 0)
		return KV_OK;
	*p = arena_alloc(a, n * sizeof(**p));
	*lens = arena_alloc(a, n * sizeof(**lens));
	if (*p == NULL || *lens == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		(*p)[i] = wire_copy_bytes(a, &pb[i], &(*lens)[i]);
		if ((*p)[i] == NULL && pb[i].len > 0)
			return KV_ENOMEM;
		if ((*p)[i] == NULL && !allow_empty)
			return KV_PROTO;
		if ((*p)[i] == NULL)
			(*p)[i] = (const uint8_t *) "";
	}
	return KV_OK;
}

/* A MULTI's sub-messages (at most max), as bytes_from_pb. */
static kv_err
subs_from_pb(arena *a, const ProtobufCBinaryData *pb, size_t n, size_t max,
    const uint8_t ***p, size_t **lens, size_t *count)
{
	if (n > max)
		return KV_PROTO;
	kv_err rv = bytes_from_pb(a, pb, n, true, p, lens);
	if (rv == KV_OK)
		*count = n;
	return rv;
}

void
wire_stats_to_pb(const part_stats *s, Kv__PartStats *pb)
{
	kv__part_stats__init(pb);
	pb->table_id = s->table_id;
	pb->part = s->part;
	pb->epoch = s->epoch;
	pb->items = s->items;
	pb->bytes = s->bytes;
	pb->read_rate = s->read_rate;
	pb->write_rate = s->write_rate;
	pb->read_credit = s->read_credit;
	pb->write_credit = s->write_credit;
	pb->read_charged = s->read_charged;
	pb->write_charged = s->write_charged;
	pb->read_admitted = s->read_admitted;
	pb->write_admitted = s->write_admitted;
	pb->read_throttled = s->read_throttled;
	pb->write_throttled = s->write_throttled;
	pb->prov_rcu = s->prov_rcu;
	pb->prov_wcu = s->prov_wcu;
	pb->n_local_items = pb->n_local_bytes = s->n_local;
	pb->local_items = (uint64_t *) s->local_items;
	pb->local_bytes = (uint64_t *) s->local_bytes;
}

void
wire_stats_from_pb(const Kv__PartStats *pb, part_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->table_id = pb->table_id;
	s->part = pb->part;
	s->epoch = pb->epoch;
	s->items = pb->items;
	s->bytes = pb->bytes;
	s->read_rate = pb->read_rate;
	s->write_rate = pb->write_rate;
	s->read_credit = pb->read_credit;
	s->write_credit = pb->write_credit;
	s->read_charged = pb->read_charged;
	s->write_charged = pb->write_charged;
	s->read_admitted = pb->read_admitted;
	s->write_admitted = pb->write_admitted;
	s->read_throttled = pb->read_throttled;
	s->write_throttled = pb->write_throttled;
	s->prov_rcu = pb->prov_rcu;
	s->prov_wcu = pb->prov_wcu;
	for (size_t i = 0; i < pb->n_local_items && i < pb->n_local_bytes &&
	    i < WIRE_LOCAL_MAX; i++) {
		s->local_items[i] = pb->local_items[i];
		s->local_bytes[i] = pb->local_bytes[i];
		s->n_local++;
	}
}

kv_err
wire_pack_request(const rpc_request *r, uint8_t **out, size_t *len)
{
	Kv__Request pb = KV__REQUEST__INIT;
	pb_table_buf tb;
	bool have_table = false;
	ProtobufCBinaryData *subs = NULL;
	kv_err rv;

	pb.op = r->op;
	pb.table_id = r->table_id;
	pb.part = r->part;
	pb.epoch = r->epoch;
	pb.key.data = (uint8_t *) r->key;
	pb.key.len = r->key_len;
	pb.item.data = (uint8_t *) r->item;
	pb.item.len = r->item_len;
	pb.condition.data = (uint8_t *) r->condition;
	pb.condition.len = r->condition_len;
	pb.update.data = (uint8_t *) r->update;
	pb.update.len = r->update_len;
	pb.return_on_failure = r->return_on_failure;
	pb.range_lo.data = (uint8_t *) r->range_lo;
	pb.range_lo.len = r->range_lo_len;
	pb.range_hi.data = (uint8_t *) r->range_hi;
	pb.range_hi.len = r->range_hi_len;
	pb.has_hi = r->range_hi != NULL;
	pb.backward = r->backward;
	pb.limit = r->limit;
	pb.max_bytes = r->max_bytes;
	pb.return_values = r->return_values;
	pb.consistent = r->consistent;
	if (r->table_name != NULL)
		pb.table_name = (char *) r->table_name;
	pb.min_version = r->min_version;
	pb.node = r->node;
	if (r->table != NULL) {
		have_table = true;
		if ((rv = wire_table_to_pb(r->table, &tb)) != KV_OK)
			goto out;
		pb.table = &tb.t;
	}
	if ((rv = bytes_to_pb(r->subs, r->sub_lens, r->n_subs, &subs)) !=
	    KV_OK)
		goto out;
	pb.n_subs = r->n_subs;
	pb.subs = subs;
	pb.move_id = r->move_id;
	pb.reason = r->reason;
	pb.ack = r->ack;
	pb.local = r->local;
	pb.txn = r->txn;
	pb.n_cuts = r->n_cuts;
	pb.cuts = (uint64_t *) r->cuts;
	rv = wire_pack_pb(&pb.base, out, len);
out:
	free(subs);
	if (have_table)
		wire_table_buf_fini(&tb);
	return rv;
}

/*
 * protobuf-c's own allocations while unpacking a request or a response
 * come from the caller's arena, which outlives the unpacked message: no
 * malloc and free per field, and nothing to free afterwards.
 */
void *
wire_pb_arena_alloc(void *data, size_t n)
{
	return arena_alloc_raw(data, n > 0 ? n : 1);
}

void
wire_pb_arena_free(void *data, void *p)
{
	(void) data;
	(void) p;
}


kv_err
wire_unpack_request(const uint8_t *buf, size_t len, arena *a,
    rpc_request *r)
{
	ProtobufCAllocator al = PB_ARENA(a);
	Kv__Request *pb = kv__request__unpack(&al, len, buf);
	kv_err rv = KV_OK;

	memset(r, 0, sizeof(*r));
	if (pb == NULL)
		return KV_PROTO;
	r->op = (rpc_op) pb->op;
	r->table_id = pb->table_id;
	r->part = pb->part;
	r->epoch = pb->epoch;
	r->key = wire_copy_bytes(a, &pb->key, &r->key_len);
	r->item = wire_copy_bytes(a, &pb->item, &r->item_len);
	r->condition = wire_copy_bytes(a, &pb->condition, &r->condition_len);
	r->update = wire_copy_bytes(a, &pb->update, &r->update_len);
	r->return_on_failure = pb->return_on_failure;
	r->range_lo = wire_copy_bytes(a, &pb->range_lo, &r->range_lo_len);
	if (pb->has_hi) {
		r->range_hi = wire_copy_bytes(a, &pb->range_hi, &r->range_hi_len);
		if (r->range_hi == NULL)
			r->range_hi = (const uint8_t *) ""; /* empty bound */
	}
	r->backward = pb->backward;
	r->limit = pb->limit;
	r->max_bytes = pb->max_bytes;
	if (pb->range_lo.len > 0 && r->range_lo == NULL) {
		rv = KV_ENOMEM;
		goto out;
	}
	if ((pb->key.len > 0 && r->key == NULL) ||
	    (pb->item.len > 0 && r->item == NULL) ||
	    (pb->condition.len > 0 && r->condition == NULL) ||
	    (pb->update.len > 0 && r->update == NULL)) {
		rv = KV_ENOMEM;
		goto out;
	}
	if (pb->return_values > RPC_RETURN_UPDATED_NEW) {
		rv = KV_PROTO;
		goto out;
	}
	r->return_values = (rpc_return) pb->return_values;
	r->consistent = pb->consistent;
	if (pb->table_name != NULL && pb->table_name[0] != '\0') {
		r->table_name = arena_dup(a, pb->table_name,
		    strlen(pb->table_name));
		if (r->table_name == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
	}
	r->min_version = pb->min_version;
	r->node = pb->node;
	if ((rv = subs_from_pb(a, pb->subs, pb->n_subs,
	    pb->op == RPC_INDEX_APPLY ? RPC_INDEX_APPLY_MAX : RPC_MULTI_MAX,
	    &r->subs, &r->sub_lens, &r->n_subs)) != KV_OK)
		goto out;
	r->move_id = pb->move_id;
	r->reason = pb->reason;
	r->ack = pb->ack;
	r->local = pb->local;
	r->txn = pb->txn;
	if (pb->n_cuts > RPC_MAX_CUTS) {
		rv = KV_PROTO;
		goto out;
	}
	if (pb->n_cuts > 0) {
		uint64_t *cuts = arena_alloc(a, pb->n_cuts * sizeof(*cuts));
		if (cuts == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		memcpy(cuts, pb->cuts, pb->n_cuts * sizeof(*cuts));
		r->cuts = cuts;
		r->n_cuts = pb->n_cuts;
	}
	if (pb->table != NULL) {
		table *t = malloc(sizeof(*t));
		if (t == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		if ((rv = wire_table_from_pb(pb->table, t)) != KV_OK) {
			free(t);
			goto out;
		}
		r->table = t;
	}
out:
	return rv; /* pb is in the arena */
}

void
wire_request_fini(rpc_request *r)
{
	if (r->table != NULL) {
		table *t = (table *) r->table;
		table_fini(t);
		free(t);
		r->table = NULL;
	}
}

kv_err
wire_pack_response(const rpc_response *r, uint8_t **out, size_t *len)
{
	Kv__Response pb = KV__RESPONSE__INIT;
	pb_catalog_buf cb;
	pb_table_buf tb;
	bool have_cat = false, have_table = false;
	Kv__PartStats *stats = NULL, **statp = NULL;
	ProtobufCBinaryData *items = NULL, *subs = NULL, *blobs = NULL;
	kv_err rv = KV_OK;

	pb.code = r->code;
	if (r->message != NULL)
		pb.message = (char *) r->message;
	pb.found = r->found;
	pb.item.data = (uint8_t *) r->item;
	pb.item.len = r->item_len;
	if (r->cat != NULL) {
		have_cat = true;
		if ((rv = catalog_to_pb(r->cat, &cb)) != KV_OK)
			goto out;
		pb.catalog = &cb.c;
	}
	if (r->table != NULL) {
		have_table = true;
		if ((rv = wire_table_to_pb(r->table, &tb)) != KV_OK)
			goto out;
		pb.table = &tb.t;
	}
	if (r->n_stats > 0) {
		stats = calloc(r->n_stats, sizeof(*stats));
		statp = calloc(r->n_stats, sizeof(*statp));
		if (stats == NULL || statp == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < r->n_stats; i++) {
			wire_stats_to_pb(&r->stats[i], &stats[i]);
			statp[i] = &stats[i];
		}
		pb.n_stats = r->n_stats;
		pb.stats = statp;
	}
	pb.scanned = r->scanned;
	pb.read_bytes = r->read_bytes;
	pb.last_item.data = (uint8_t *) r->last_item;
	pb.last_item.len = r->last_item_len;
	pb.old_size = r->old_size;
	pb.new_size = r->new_size;
	pb.throttle = r->throttle;
	if ((rv = bytes_to_pb(r->items, r->item_lens, r->n_items, &items)) !=
	    KV_OK ||
	    (rv = bytes_to_pb(r->subs, r->sub_lens, r->n_subs, &subs)) !=
	    KV_OK ||
	    (rv = bytes_to_pb(r->blobs, r->blob_lens, r->n_blobs, &blobs)) !=
	    KV_OK)
		goto out;
	pb.n_items = r->n_items;
	pb.items = items;
	pb.n_subs = r->n_subs;
	pb.subs = subs;
	pb.n_blobs = r->n_blobs;
	pb.blobs = blobs;
	pb.seq = r->seq;
	pb.has_coll = r->has_coll;
	pb.coll_size = r->coll_size;
	pb.locked = r->locked;
	rv = wire_pack_pb(&pb.base, out, len);
out:
	free(items);
	free(subs);
	free(blobs);
	if (have_cat)
		catalog_buf_fini(&cb);
	if (have_table)
		wire_table_buf_fini(&tb);
	free(stats);
	free(statp);
	return rv;
}

kv_err
wire_unpack_response(const uint8_t *buf, size_t len, arena *a,
    rpc_response *r)
{
	ProtobufCAllocator al = PB_ARENA(a);
	Kv__Response *pb = kv__response__unpack(&al, len, buf);
	kv_err rv = KV_OK;

	memset(r, 0, sizeof(*r));
	if (pb == NULL)
		return KV_PROTO;
	if (pb->code >= KV_ERR_COUNT) {
		rv = KV_PROTO;
		goto out;
	}
	r->code = (kv_err) pb->code;
	if (pb->message != NULL && pb->message[0] != '\0')
		r->message = arena_dup(a, pb->message, strlen(pb->message));
	r->found = pb->found;
	r->item = wire_copy_bytes(a, &pb->item, &r->item_len);
	if (pb->item.len > 0 && r->item == NULL) {
		rv = KV_ENOMEM;
		goto out;
	}
	if (pb->n_stats > 0) {
		r->stats = arena_alloc(a, pb->n_stats * sizeof(part_stats));
		if (r->stats == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < pb->n_stats; i++) {
			wire_stats_from_pb(pb->stats[i], &r->stats[i]);
		}
		r->n_stats = pb->n_stats;
	}
	r->scanned = pb->scanned;
	r->read_bytes = pb->read_bytes;
	r->old_size = pb->old_size;
	r->new_size = pb->new_size;
	r->throttle = pb->throttle;
	r->has_coll = pb->has_coll;
	r->coll_size = pb->coll_size;
	r->locked = pb->locked;
	r->last_item = wire_copy_bytes(a, &pb->last_item, &r->last_item_len);
	if ((rv = bytes_from_pb(a, pb->items, pb->n_items, false, &r->items,
	    &r->item_lens)) != KV_OK)
		goto out;
	r->n_items = pb->n_items;
	if ((rv = subs_from_pb(a, pb->subs, pb->n_subs, RPC_MULTI_MAX,
	    &r->subs, &r->sub_lens, &r->n_subs)) != KV_OK)
		goto out;
	if ((rv = bytes_from_pb(a, pb->blobs, pb->n_blobs, false, &r->blobs,
	    &r->blob_lens)) != KV_OK)
		goto out;
	r->n_blobs = pb->n_blobs;
	r->seq = pb->seq;
	if (pb->catalog != NULL &&
	    (rv = catalog_from_pb(pb->catalog, &r->cat)) != KV_OK)
		goto out;
	if (pb->table != NULL) {
		table *t = malloc(sizeof(*t));
		if (t == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		if ((rv = wire_table_from_pb(pb->table, t)) != KV_OK) {
			free(t);
			goto out;
		}
		r->table = t;
	}
out:
	if (rv != KV_OK)
		wire_response_fini(r);
	return rv; /* pb is in the arena */
}

void
wire_response_fini(rpc_response *r)
{
	catalog_free(r->cat);
	r->cat = NULL;
	if (r->table != NULL) {
		table_fini(r->table);
		free(r->table);
		r->table = NULL;
	}
}

kv_err
wire_pack_catalog(const catalog *c, uint8_t **out, size_t *len)
{
	pb_catalog_buf b;
	kv_err rv = catalog_to_pb(c, &b);
	if (rv == KV_OK)
		rv = wire_pack_pb(&b.c.base, out, len);
	catalog_buf_fini(&b);
	return rv;
}

kv_err
wire_unpack_catalog(const uint8_t *buf, size_t len, catalog **out)
{
	Kv__Catalog *pb = kv__catalog__unpack(NULL, len, buf);
	if (pb == NULL)
		return KV_CORRUPT;
	kv_err rv = catalog_from_pb(pb, out);
	kv__catalog__free_unpacked(pb, NULL);
	return rv == KV_PROTO ? KV_CORRUPT : rv;
}

kv_err
wire_pack_table(const table *t, uint8_t **out, size_t *len)
{
	pb_table_buf b;
	kv_err rv = wire_table_to_pb(t, &b);
	if (rv == KV_OK)
		rv = wire_pack_pb(&b.t.base, out, len);
	wire_table_buf_fini(&b);
	return rv;
}

kv_err
wire_unpack_table(const uint8_t *buf, size_t len, table *out)
{
	Kv__Table *pb = kv__table__unpack(NULL, len, buf);
	if (pb == NULL)
		return KV_CORRUPT;
	kv_err rv = wire_table_from_pb(pb, out);
	kv__table__free_unpacked(pb, NULL);
	return rv == KV_PROTO ? KV_CORRUPT : rv;
}

kv_err
wire_pack_backup(const backup_rec *b, uint8_t **out, size_t *len)
{
	pb_table_buf tb;
	Kv__Backup pb;
	kv_err rv = wire_table_to_pb(&b->src, &tb);
	kv__backup__init(&pb);
	pb.id = b->id;
	pb.name = b->name != NULL ? b->name : (char *) "";
	pb.arn = b->arn != NULL ? b->arn : (char *) "";
	pb.status = b->status;
	pb.created_ms = b->created_ms;
	pb.size_bytes = b->size_bytes;
	pb.items = b->items;
	pb.source = &tb.t;
	if (rv == KV_OK)
		rv = wire_pack_pb(&pb.base, out, len);
	wire_table_buf_fini(&tb);
	return rv;
}

kv_err
wire_unpack_backup(const uint8_t *buf, size_t len, backup_rec *out)
{
	Kv__Backup *pb = kv__backup__unpack(NULL, len, buf);
	kv_err rv = KV_OK;
	memset(out, 0, sizeof(*out));
	if (pb == NULL)
		return KV_CORRUPT;
	if (pb->source == NULL || pb->status < BACKUP_CREATING ||
	    pb->status > BACKUP_DELETED) {
		kv__backup__free_unpacked(pb, NULL);
		return KV_CORRUPT;
	}
	out->id = pb->id;
	out->status = (backup_status) pb->status;
	out->created_ms = pb->created_ms;
	out->size_bytes = pb->size_bytes;
	out->items = pb->items;
	out->name = strdup(pb->name);
	out->arn = strdup(pb->arn);
	if (out->name == NULL || out->arn == NULL)
		rv = KV_ENOMEM;
	else
		rv = wire_table_from_pb(pb->source, &out->src);
	kv__backup__free_unpacked(pb, NULL);
	if (rv != KV_OK)
		backup_rec_fini(out);
	return rv == KV_PROTO ? KV_CORRUPT : rv;
}

uint8_t *
wire_pair_make(arena *a, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl, size_t *len)
{
	uint8_t *b = arena_alloc(a, 4 + kl + vl);
	if (b == NULL)
		return NULL;
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t) (kl >> (8 * i));
	memcpy(b + 4, k, kl);
	if (vl > 0)
		memcpy(b + 4 + kl, v, vl);
	*len = 4 + kl + vl;
	return b;
}

bool
wire_pair_read(const uint8_t *b, size_t len, const uint8_t **k, size_t *kl,
    const uint8_t **v, size_t *vl)
{
	if (len < 4)
		return false;
	size_t n = (size_t) b[0] | (size_t) b[1] << 8 | (size_t) b[2] << 16 |
	    (size_t) b[3] << 24;
	if (n > len - 4)
		return false;
	*k = b + 4;
	*kl = n;
	*v = b + 4 + n;
	*vl = len - 4 - n;
	return true;
}
