/*
 * wire_cluster.c — packing of the cluster's nng messages (wire_cluster.h).
 * Same habits as wire.c: packing borrows our structs, unpacking copies
 * into an arena or owned structures and leaves nothing of protobuf-c.
 */
#include "wire_cluster.h"

#include <stdlib.h>
#include <string.h>

#include "wire_int.h"

kv_err
wire_pack_catalog_event(const catalog_event *e, uint8_t **out, size_t *len)
{
	Kv__CatalogEvent pb = KV__CATALOG_EVENT__INIT;
	pb_table_buf *bufs = NULL;
	Kv__Table **tp = NULL;
	size_t done = 0;
	kv_err rv = KV_OK;

	pb.kind = e->kind;
	pb.version = e->version;
	pb.prev = e->prev;
	pb.published_us = e->published_us;
	pb.next_table_id = e->next_table_id;
	pb.gone = (uint32_t *) e->gone;
	pb.n_gone = e->n_gone;
	if (e->n_upserts > 0) {
		bufs = calloc(e->n_upserts, sizeof(*bufs));
		tp = calloc(e->n_upserts, sizeof(*tp));
		if (bufs == NULL || tp == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		for (; done < e->n_upserts; done++) {
			rv = wire_table_to_pb(&e->upserts[done], &bufs[done]);
			if (rv != KV_OK)
				goto out;
			tp[done] = &bufs[done].t;
		}
		pb.upserts = tp;
		pb.n_upserts = e->n_upserts;
	}
	rv = wire_pack_pb(&pb.base, out, len);
out:
	for (size_t i = 0; i < done; i++)
		wire_table_buf_fini(&bufs[i]);
	free(bufs);
	free(tp);
	return rv;
}

kv_err
wire_unpack_catalog_event(const uint8_t *buf, size_t len, catalog_event *e)
{
	Kv__CatalogEvent *pb = kv__catalog_event__unpack(NULL, len, buf);
	kv_err rv = KV_OK;

	memset(e, 0, sizeof(*e));
	if (pb == NULL)
		return KV_PROTO;
	if (pb->kind != CATALOG_EVENT_CHANGE &&
	    pb->kind != CATALOG_EVENT_HEARTBEAT) {
		rv = KV_PROTO;
		goto out;
	}
	e->kind = (catalog_event_kind) pb->kind;
	e->version = pb->version;
	e->prev = pb->prev;
	e->published_us = pb->published_us;
	e->next_table_id = pb->next_table_id;
	if (pb->n_gone > 0) {
		e->gone = malloc(pb->n_gone * sizeof(uint32_t));
		if (e->gone == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		memcpy(e->gone, pb->gone, pb->n_gone * sizeof(uint32_t));
		e->n_gone = pb->n_gone;
	}
	if (pb->n_upserts > 0) {
		e->upserts = calloc(pb->n_upserts, sizeof(table));
		if (e->upserts == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < pb->n_upserts; i++) {
			rv = wire_table_from_pb(pb->upserts[i], &e->upserts[i]);
			if (rv != KV_OK)
				goto out;
			e->n_upserts = i + 1;
		}
	}
out:
	kv__catalog_event__free_unpacked(pb, NULL);
	if (rv != KV_OK)
		wire_catalog_event_fini(e);
	return rv;
}

void
wire_catalog_event_fini(catalog_event *e)
{
	for (size_t i = 0; i < e->n_upserts; i++)
		table_fini(&e->upserts[i]);
	free(e->upserts);
	free(e->gone);
	memset(e, 0, sizeof(*e));
}

kv_err
wire_pack_member(const member *m, uint8_t **out, size_t *len)
{
	Kv__Member pb = KV__MEMBER__INIT;
	Kv__PartStats *stats = NULL, **statp = NULL;
	Kv__FeedArrival *arr = NULL, **arrp = NULL;
	kv_err rv;

	pb.kind = m->kind;
	pb.index = m->index;
	pb.pid = m->pid;
	pb.started_ms = m->started_ms;
	pb.catalog_version = m->catalog_version;
	pb.requests = m->requests;
	pb.connections = m->connections;
	pb.addr = (char *) (m->addr != NULL ? m->addr : "");
	pb.feed_changes = m->feed_changes;
	pb.feed_fetches = m->feed_fetches;
	pb.feed_gaps = m->feed_gaps;
	if (m->n_arrivals > 0) {
		arr = calloc(m->n_arrivals, sizeof(*arr));
		arrp = calloc(m->n_arrivals, sizeof(*arrp));
		if (arr == NULL || arrp == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < m->n_arrivals; i++) {
			kv__feed_arrival__init(&arr[i]);
			arr[i].version = m->arrivals[i].version;
			arr[i].published_us = m->arrivals[i].published_us;
			arr[i].applied_us = m->arrivals[i].applied_us;
			arrp[i] = &arr[i];
		}
		pb.arrivals = arrp;
		pb.n_arrivals = m->n_arrivals;
	}
	if (m->n_stats > 0) {
		stats = calloc(m->n_stats, sizeof(*stats));
		statp = calloc(m->n_stats, sizeof(*statp));
		if (stats == NULL || statp == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < m->n_stats; i++) {
			wire_stats_to_pb(&m->stats[i], &stats[i]);
			statp[i] = &stats[i];
		}
		pb.stats = statp;
		pb.n_stats = m->n_stats;
	}
	rv = wire_pack_pb(&pb.base, out, len);
out:
	free(stats);
	free(statp);
	free(arr);
	free(arrp);
	return rv;
}

kv_err
wire_unpack_member(const uint8_t *buf, size_t len, arena *a, member *m)
{
	ProtobufCAllocator al = PB_ARENA(a);
	Kv__Member *pb = kv__member__unpack(&al, len, buf);

	memset(m, 0, sizeof(*m));
	if (pb == NULL)
		return KV_PROTO;
	if (pb->kind != MEMBER_NODE && pb->kind != MEMBER_ROUTER)
		return KV_PROTO;
	m->kind = (member_kind) pb->kind;
	m->index = pb->index;
	m->pid = pb->pid;
	m->started_ms = pb->started_ms;
	m->catalog_version = pb->catalog_version;
	m->requests = pb->requests;
	m->connections = pb->connections;
	m->addr = pb->addr; /* in the arena, like pb */
	m->feed_changes = pb->feed_changes;
	m->feed_fetches = pb->feed_fetches;
	m->feed_gaps = pb->feed_gaps;
	if (pb->n_arrivals > 0) {
		m->arrivals = arena_alloc(a, pb->n_arrivals *
		    sizeof(feed_arrival));
		if (m->arrivals == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < pb->n_arrivals; i++) {
			m->arrivals[i].version = pb->arrivals[i]->version;
			m->arrivals[i].published_us =
			    pb->arrivals[i]->published_us;
			m->arrivals[i].applied_us = pb->arrivals[i]->applied_us;
		}
		m->n_arrivals = pb->n_arrivals;
	}
	if (pb->n_stats > 0) {
		m->stats = arena_alloc(a, pb->n_stats * sizeof(part_stats));
		if (m->stats == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < pb->n_stats; i++)
			wire_stats_from_pb(pb->stats[i], &m->stats[i]);
		m->n_stats = pb->n_stats;
	}
	return KV_OK;
}

kv_err
wire_pack_survey_ask(uint32_t what, uint8_t **out, size_t *len)
{
	Kv__SurveyAsk pb = KV__SURVEY_ASK__INIT;
	pb.what = what;
	return wire_pack_pb(&pb.base, out, len);
}

kv_err
wire_unpack_survey_ask(const uint8_t *buf, size_t len, uint32_t *what)
{
	Kv__SurveyAsk *pb = kv__survey_ask__unpack(NULL, len, buf);
	if (pb == NULL)
		return KV_PROTO;
	*what = pb->what;
	kv__survey_ask__free_unpacked(pb, NULL);
	return KV_OK;
}

kv_err
wire_pack_peer_msg(const peer_msg *m, uint8_t **out, size_t *len)
{
	Kv__PeerMessage pb = KV__PEER_MESSAGE__INIT;
	pb.type = m->type;
	pb.from = m->from;
	pb.body.data = (uint8_t *) m->body;
	pb.body.len = m->len;
	return wire_pack_pb(&pb.base, out, len);
}

kv_err
wire_unpack_peer_msg(const uint8_t *buf, size_t len, arena *a, peer_msg *m)
{
	ProtobufCAllocator al = PB_ARENA(a);
	Kv__PeerMessage *pb = kv__peer_message__unpack(&al, len, buf);

	memset(m, 0, sizeof(*m));
	if (pb == NULL)
		return KV_PROTO;
	m->type = pb->type;
	m->from = pb->from;
	m->body = pb->body.data; /* in the arena */
	m->len = pb->body.len;
	return KV_OK;
}

kv_err
wire_pack_peer_reply(const peer_reply *r, uint8_t **out, size_t *len)
{
	Kv__PeerReply pb = KV__PEER_REPLY__INIT;
	pb.code = r->code;
	if (r->message != NULL)
		pb.message = (char *) r->message;
	pb.body.data = (uint8_t *) r->body;
	pb.body.len = r->len;
	return wire_pack_pb(&pb.base, out, len);
}

kv_err
wire_unpack_peer_reply(const uint8_t *buf, size_t len, arena *a,
    peer_reply *r)
{
	ProtobufCAllocator al = PB_ARENA(a);
	Kv__PeerReply *pb = kv__peer_reply__unpack(&al, len, buf);

	memset(r, 0, sizeof(*r));
	if (pb == NULL || pb->code >= KV_ERR_COUNT)
		return KV_PROTO;
	r->code = (kv_err) pb->code;
	if (pb->message != NULL && pb->message[0] != '\0')
		r->message = pb->message;
	r->body = pb->body.data;
	r->len = pb->body.len;
	return KV_OK;
}
