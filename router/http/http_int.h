/*
 * http_int.h — what the router's HTTP server (http.c) shares with its
 * io_uring rounds (http_ring.c): the loop's types and the functions that
 * take the outcome of a read or a write. Private to those two files; the
 * locking rule is http.c's (a loop's connections, links and calls belong
 * to its thread alone).
 */
#ifndef KV_ROUTER_HTTP_INT_H
#define KV_ROUTER_HTTP_INT_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>
#include <time.h>

#include "api_async.h"
#include "http.h"
#include "http_parse.h"

#define MAX_LOOPS 8
#define WORKERS 16
#define READ_CHUNK (64 * 1024)
#define IDLE_SECONDS 120
#define DRAIN_LIMIT (64u * 1024 * 1024) /* then a refused upload is cut */
/* Answers a client may leave unread before its requests wait. */
#define OUT_LIMIT (1024u * 1024)
/* Frames a node link collects before it is written, mid-round. */
#define LINK_BATCH 8
/* Writes a round hands the kernel in one io_uring_enter (at most). */
#define RING_ENTRIES 256
/* Input held before reading stops (the largest request the parser takes). */
#define IN_LIMIT (HTTP_MAX_BODY + HTTP_MAX_BODY / 4 + 2 * HTTP_MAX_HEAD)
#define JSON_TYPE "application/x-amz-json-1.0"

typedef struct loop loop;
typedef struct hconn hconn;

/* What a round's read through the ring left for the connection (round_reads). */
typedef enum pre_read {
	PRE_NONE,    /* nothing: conn_read / link_read read for themselves */
	PRE_EMPTIED, /* bytes (or none) came, and the socket is empty */
	PRE_MORE,    /* the buffer filled: there may be more */
	PRE_EOF,     /* the peer closed */
	PRE_ERROR,   /* the connection broke */
} pre_read;

typedef struct buf {
	char *p;
	size_t len, cap;
} buf;

/* A client connection (owned by its loop). */
struct hconn {
	hconn *prev, *next; /* the loop's connections */
	loop *l;
	int fd;            /* -1 once closed */
	buf in, out;
	size_t sent;       /* of out, already written */
	http_req rq;       /* the request being parsed or served */
	bool busy;         /* rq is being served */
	bool closing;      /* close once out is written */
	bool draining;     /* refused: discard input until the client closes */
	bool read_more;    /* input left unread while busy */
	bool eof;          /* the client will send no more (it may read) */
	bool hup;          /* its FIN has arrived: read to the end */
	bool freed;        /* on the loop's dead list */
	bool queued;       /* on the loop's list of writes for the round */
	pre_read pre;      /* this round's read, already in `in` */
	size_t drained;
	time_t active;
	/* When the sweep first saw part of the next request in `in` (0:
	 * none): a request not whole REQUEST_SECONDS later is dropped. */
	time_t started;
};

struct relay;

/*
 * A request waiting for its node's answer: a client's single-item
 * request (c, s), or a worker's call relayed by the loop (rl; http.c).
 */
typedef struct call {
	struct call *next;
	hconn *c;
	struct relay *rl;
	int64_t deadline_ms;
	api_async s;
} call;

struct nframe;

/* A loop's connection to one node. */
typedef struct nlink {
	int fd;            /* -1: not connected; with nf, nng's descriptor */
	struct nframe *nf; /* --nng-requests: the frames go over nng */
	bool connecting;
	unsigned queued;   /* frames in out */
	buf out, in;
	call *head, *tail; /* sent or queued, oldest first */
	pre_read pre;      /* this round's read, already in `in` */
} nlink;

/* A request for the worker pool, and its answer. */
/* The GET requests a worker answers (job.get). */
#define GET_METRICS 1
#define GET_STATUS 2

typedef struct job {
	struct job *next;
	loop *l;
	hconn *c;
	int get;           /* GET_METRICS, GET_STATUS, else 0: a POST */
	char *target, *auth, *body;
	size_t len;
	reply rp;
} job;

struct loop {
	http *h;
	int ep, efd;       /* epoll set; eventfd: done jobs, stop */
	pthread_t th;
	bool started;
	hconn *conns;
	hconn *dead;       /* closed this round; freed after its events */
	nlink links[CONFIG_MAX_NODES];
	pthread_mutex_t done_mu;
	job *done;         /* answered by workers; guarded by done_mu */
	/* Workers' calls to send (http_relay.c); guarded by done_mu. */
	struct relay *relays;
	bool relays_closed; /* the loop has stopped taking them */
	time_t swept;
	bool urgent;       /* a link has LINK_BATCH frames waiting */
	char date[64];     /* the Date header, per second */
	time_t date_at;
	/*
	 * The round's writes (round_writes): answers to clients and frames
	 * to nodes go to the kernel together, in one io_uring_enter, instead
	 * of a send each. Without a ring (io_uring refused), each is sent
	 * at once.
	 */
	struct io_uring ring;
	bool ring_ok;
	hconn **writes;    /* connections with answers to write */
	size_t n_writes, cap_writes;
};

struct http {
	router *r;
	int lfd;
	atomic_bool stop;
	int n_loops;
	loop loops[MAX_LOOPS];
	pthread_mutex_t pool_mu;
	pthread_cond_t pool_cv;
	job *queue, *queue_tail; /* guarded by pool_mu */
	pthread_t workers[WORKERS];
	int n_workers;
};

/*
 * epoll data: a client connection's pointer, or for the others a tag in
 * the low bits (pointers are aligned, so bit 0 is free).
 */
#define TAG_LISTEN 3u
#define TAG_EVENT 5u


/* Relays (http_relay.c): a worker's node call carried by a loop. */
typedef enum relay_state {
	RELAY_WAITING,
	RELAY_DONE,     /* rv (and resp after KV_OK): conn_call's outcome */
	RELAY_NOT_SENT, /* nothing reached the node: call it another way */
} relay_state;

typedef struct relay {
	struct relay *next; /* the loop's relays */
	uint32_t node;
	uint8_t *msg;       /* the packed request; the worker's */
	size_t len;
	arena *a;
	rpc_response *resp;
	kv_err rv;
	relay_state state;  /* guarded by mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
} relay;

/* relay_end: the loop ends rl; after this rl may be gone. */
void relay_end(relay *rl, relay_state st, kv_err rv, rpc_response *resp);
/* take_relays queues the relays workers handed to l (its wake-up). */
void take_relays(loop *l);
/* relays_close: a stopping loop takes no more and ends those it holds. */
void relays_close(loop *l);
/* relay_call is the workers' conn_relay_fn (arg: the job's loop). */
bool relay_call(void *arg, uint32_t node, const rpc_request *req, arena *a,
    rpc_response *resp, kv_err *rv);

/*
 * link_queue queues call q's packed request on l's link to node (http.c);
 * false, with nothing queued, for an unknown node or without memory.
 */
bool link_queue(loop *l, uint32_t node, call *q, const uint8_t *msg,
    size_t len);

/* Buffers (http.c). */
bool buf_reserve(buf *b, size_t extra);
void buf_consume(buf *b, size_t n);

/* Bytes of answers queued for c and not yet written. */
size_t unsent(const hconn *c);

/*
 * conn_wrote / link_wrote take the outcome of writing c->out or k->out: n
 * bytes written, or -1 when the connection broke. False: it is gone (a
 * connection dropped, a link failed with its calls).
 */
bool conn_wrote(hconn *c, ssize_t n);
bool link_wrote(nlink *k, loop *l, ssize_t n);

/*
 * conn_room: after writes of c->out took it from `was` bytes waiting to
 * unsent(c), requests held back while over OUT_LIMIT go on (http.c).
 * Every write that can cross the limit calls it, the ring's as well as
 * EPOLLOUT's: a crossing missed leaves the held requests unanswered for
 * good, since the connection's later events find no more than the limit.
 */
void conn_room(hconn *c, size_t was);

/* conn_flush_now / link_flush write what they can now (http.c). */
bool conn_flush_now(hconn *c);
bool link_flush(nlink *k, loop *l);

/*
 * A round through the ring (http_ring.c): round_reads before a round's
 * events are handled, round_writes after. l->ring_ok must be set.
 */
void round_reads(loop *l, const struct epoll_event *evs, int n_evs);
void round_writes(loop *l);

/* http_head.c: the pieces of an answer's head. */
uint32_t http_crc32(const char *s, size_t n);
char *http_put_str(char *p, const char *s);
char *http_put_dec(char *p, uint64_t v);
char *http_put_hex(char *p, uint64_t v, int digits);
const char *http_reason(int status);
char *http_put_cors(char *p, const http_req *rq);

#endif
