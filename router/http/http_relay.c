/*
 * http_relay.c — relays (http_int.h): workers' node calls over the
 * router's event loop links.
 *
 * A worker's node call (conn_call) goes out on its job's loop's
 * link to the node (relay_call, as conn_relay_set arranges), beside the
 * loop's own requests, so that the node reads it with others instead of
 * waking for it alone; on this VM a wake-up costs more than the work of
 * a small request. The worker packs the request, hands the relay to the
 * loop under done_mu, and waits on the relay's own lock until the loop
 * ends it; the loop unpacks the answer into the worker's arena, which
 * the worker leaves alone while it waits. A relay lives on the worker's
 * stack: once ended it is the worker's again. One the link did not send
 * (a refused connection, a stopping loop) goes back unsent, and the
 * worker calls through its own client (conn_call), with its grace for a
 * starting node. Side by side (`bench --txn`, 4 s rounds): the nodes'
 * CPU per two-node TransactWriteItems went from 204-266 to 113-146 us,
 * and the transactions from 0.13-0.15 to 0.16-0.17 of PutItem's rate.
 */
#include "http_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The loop ends rl; after this rl may be gone. */
void
relay_end(relay *rl, relay_state st, kv_err rv, rpc_response *resp)
{
	pthread_mutex_lock(&rl->mu);
	rl->rv = rv;
	if (resp != NULL)
		*rl->resp = *resp;
	rl->state = st;
	pthread_cond_signal(&rl->cv);
	pthread_mutex_unlock(&rl->mu);
}

/* Queues the relays workers handed to l (take_done's wake-up). */
void
take_relays(loop *l)
{
	pthread_mutex_lock(&l->done_mu);
	relay *rl = l->relays;
	l->relays = NULL;
	pthread_mutex_unlock(&l->done_mu);
	while (rl != NULL) {
		relay *next = rl->next; /* rl may be gone once ended */
		call *q = calloc(1, sizeof(*q));
		if (q != NULL)
			q->rl = rl;
		if (q == NULL || !link_queue(l, rl->node, q, rl->msg,
		    rl->len)) {
			free(q);
			relay_end(rl, RELAY_NOT_SENT, KV_ENOMEM, NULL);
		}
		rl = next;
	}
}

/*
 * A stopping loop takes no more relays and ends those it holds, so that
 * no worker waits for it: those not queued yet were not sent; those on
 * a link may have been (KV_UNAVAILABLE).
 */
void
relays_close(loop *l)
{
	pthread_mutex_lock(&l->done_mu);
	l->relays_closed = true;
	relay *rl = l->relays;
	l->relays = NULL;
	pthread_mutex_unlock(&l->done_mu);
	while (rl != NULL) {
		relay *next = rl->next;
		relay_end(rl, RELAY_NOT_SENT, KV_UNAVAILABLE, NULL);
		rl = next;
	}
	for (size_t i = 0; i < CONFIG_MAX_NODES; i++) {
		nlink *k = &l->links[i];
		call **pp = &k->head;
		k->tail = NULL;
		while (*pp != NULL) {
			call *q = *pp;
			if (q->rl != NULL) {
				*pp = q->next;
				relay_end(q->rl, RELAY_DONE, KV_UNAVAILABLE,
				    NULL);
				free(q);
			} else {
				k->tail = q;
				pp = &q->next;
			}
		}
	}
}

/*
 * conn_relay_fn for a worker serving a job of loop arg: the request
 * goes out on the loop's link to the node, beside the loop's own, and
 * the worker waits for the loop to end it.
 */
bool
relay_call(void *arg, uint32_t node, const rpc_request *req, arena *a,
    rpc_response *resp, kv_err *rv)
{
	loop *l = arg;
	relay rl = { .node = node, .a = a, .resp = resp,
		.state = RELAY_WAITING };
	if (wire_pack_request(req, &rl.msg, &rl.len) != KV_OK)
		return false;
	pthread_mutex_init(&rl.mu, NULL);
	pthread_cond_init(&rl.cv, NULL);
	pthread_mutex_lock(&l->done_mu);
	bool open = !l->relays_closed;
	if (open) {
		rl.next = l->relays;
		l->relays = &rl;
	}
	pthread_mutex_unlock(&l->done_mu);
	if (open) {
		uint64_t one = 1;
		if (write(l->efd, &one, sizeof(one)) < 0)
			perror("kv-router: waking a loop");
		pthread_mutex_lock(&rl.mu);
		while (rl.state == RELAY_WAITING)
			pthread_cond_wait(&rl.cv, &rl.mu);
		pthread_mutex_unlock(&rl.mu);
	}
	free(rl.msg);
	pthread_mutex_destroy(&rl.mu);
	pthread_cond_destroy(&rl.cv);
	*rv = rl.rv;
	return open && rl.state == RELAY_DONE;
}
