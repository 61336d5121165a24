/*
 * rpc.c — the client side of calls to a node (see rpc.h), on plain
 * stream sockets: Unix-domain for ipc://PATH, TCP for tcp://HOST:PORT.
 *
 * Framing: every message is a 4-byte little-endian length followed by that
 * many bytes of a packed kv.proto message (wire.h). One call at a time
 * runs on a connection: the caller writes its request and reads the reply
 * on the same blocking socket, so the only thread the kernel wakes for the
 * reply is the caller itself (docs/design-notes.md, "The node transport",
 * says why this replaced nng).
 *
 * Connections are pooled per client: a call takes an idle one (or opens a
 * new one) and gives it back after a complete reply. Sockets block, with
 * the call's timeout as SO_RCVTIMEO / SO_SNDTIMEO: a call is one send and
 * one recv that sleeps until the reply is there. A connection that
 * failed in any way is closed, never reused, so a late reply can never be
 * read as the answer to another request. Before an idle connection is
 * reused it is polled: one the node closed meanwhile (it restarted) shows
 * as readable at end-of-file and is dropped instead.
 *
 * Locking rule: rpc_client.mu guards the idle list; nothing else is shared
 * between calls. A call holds no lock while it does I/O.
 */
#include "rpc.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#define MAX_IDLE 256 /* idle connections kept per node */

/* A connection and the timeout its socket has (SO_RCVTIMEO, in ms). */
typedef struct pconn {
	int fd;
	int timeout_ms;
} pconn;

struct rpc_client {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	pthread_mutex_t mu;
	pconn idle[MAX_IDLE]; /* guarded by mu */
	int n_idle;
	atomic_bool ever;   /* connected at least once */
	struct timespec opened;
};

kv_err
rpc_parse_url(const char *url, struct sockaddr_storage *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	if (strncmp(url, "ipc://", 6) == 0) {
		struct sockaddr_un *un = (struct sockaddr_un *) sa;
		const char *path = url + 6;
		if (*path == '\0' || strlen(path) >= sizeof(un->sun_path))
			return KV_EINVAL;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, path);
		*len = (socklen_t) sizeof(*un);
		return KV_OK;
	}
	if (strncmp(url, "tcp://", 6) == 0) {
		char host[256];
		const char *hp = url + 6, *colon = strrchr(hp, ':');
		const char *hend = colon;
		if (colon == NULL || colon == hp)
			return KV_EINVAL;
		if (hp[0] == '[') { /* tcp://[::1]:7000 */
			if (colon[-1] != ']')
				return KV_EINVAL;
			hp++;
			hend = colon - 1;
		}
		if (hend <= hp || (size_t) (hend - hp) >= sizeof(host))
			return KV_EINVAL;
		memcpy(host, hp, (size_t) (hend - hp));
		host[hend - hp] = '\0';
		struct addrinfo hints = { .ai_family = AF_UNSPEC,
			.ai_socktype = SOCK_STREAM }, *ai;
		if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
			return KV_EINVAL;
		memcpy(sa, ai->ai_addr, ai->ai_addrlen);
		*len = ai->ai_addrlen;
		freeaddrinfo(ai);
		return KV_OK;
	}
	return KV_EINVAL;
}

kv_err
rpc_client_open(const char *url, rpc_client **out)
{
	rpc_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return KV_ENOMEM;
	if (rpc_parse_url(url, &c->addr, &c->addr_len) != KV_OK) {
		free(c);
		return KV_EINVAL;
	}
	pthread_mutex_init(&c->mu, NULL);
	atomic_init(&c->ever, false);
	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	*out = c;
	return KV_OK;
}

void
rpc_client_close(rpc_client *c)
{
	if (c == NULL)
		return;
	for (int i = 0; i < c->n_idle; i++)
		close(c->idle[i].fd);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Waits until fd is ready for ev or the deadline passes (false). */
static bool
wait_fd(int fd, short ev, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - clock_mono_ms();
		if (left <= 0)
			return false;
		struct pollfd p = { .fd = fd, .events = ev };
		int n = poll(&p, 1, (int) left);
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return false;
	}
}

/* One connection attempt; -1 when the node does not take it. */
static int
dial(rpc_client *c, int64_t deadline)
{
	int fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *) &c->addr, c->addr_len) != 0) {
		int err = 0;
		socklen_t el = sizeof(err);
		if (errno != EINPROGRESS || !wait_fd(fd, POLLOUT, deadline) ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 ||
		    err != 0) {
			close(fd);
			return -1;
		}
	}
	if (c->addr.ss_family == AF_INET) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	/*
	 * From here on the socket blocks: a call sends and then sleeps in
	 * recv until the reply arrives, one system call each way (the
	 * deadline is SO_RCVTIMEO / SO_SNDTIMEO, set per call in set_timeout).
	 */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Gives the connection the call's timeout, unless it has it already (a
 * router's calls all use one timeout, so this is a system call per new
 * connection, not per call). The timeout bounds each send and receive.
 */
static bool
set_timeout(pconn *pc, int timeout_ms)
{
	if (pc->timeout_ms == timeout_ms)
		return true;
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000 };
	if (setsockopt(pc->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(pc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
		return false;
	pc->timeout_ms = timeout_ms;
	return true;
}

/*
 * Takes an idle connection or opens one. A client that never connected
 * and is young (its process just started; the node may be starting too)
 * keeps trying until the deadline; otherwise a refused connection means
 * the node is down, apart from a short window for a restart.
 */
static bool
take(rpc_client *c, int64_t deadline, pconn *out)
{
	pthread_mutex_lock(&c->mu);
	while (c->n_idle > 0) {
		*out = c->idle[--c->n_idle];
		pthread_mutex_unlock(&c->mu);
		struct pollfd p = { .fd = out->fd, .events = POLLIN };
		if (poll(&p, 1, 0) == 0)
			return true; /* nothing pending: still open */
		close(out->fd);  /* end-of-file: the node closed it */
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);

	bool young = !atomic_load(&c->ever) &&
	    clock_mono_ms() - ((int64_t) c->opened.tv_sec * 1000 +
	    c->opened.tv_nsec / 1000000) < 3000;
	int64_t until = young ? deadline : clock_mono_ms() + 150;
	if (until > deadline)
		until = deadline;
	for (;;) {
		int fd = dial(c, deadline);
		if (fd >= 0) {
			atomic_store(&c->ever, true);
			*out = (pconn) { .fd = fd, .timeout_ms = 0 };
			return true;
		}
		if (clock_mono_ms() >= until)
			return false;
		usleep(5000);
	}
}

static void
give_back(rpc_client *c, pconn pc)
{
	pthread_mutex_lock(&c->mu);
	if (c->n_idle < MAX_IDLE) {
		c->idle[c->n_idle++] = pc;
		pc.fd = -1;
	}
	pthread_mutex_unlock(&c->mu);
	if (pc.fd >= 0)
		close(pc.fd);
}

ssize_t
rpc_send_some(int fd, const void *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(fd, (const char *) buf + off, len - off,
		    MSG_NOSIGNAL);
		if (n > 0)
			off += (size_t) n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		else
			return -1;
	}
	return (ssize_t) off;
}

bool
rpc_send_all(int fd, const uint8_t *buf, size_t len, int wait_ms)
{
	for (;;) {
		ssize_t n = rpc_send_some(fd, buf, len);
		if (n < 0)
			return false;
		buf += n;
		len -= (size_t) n;
		if (len == 0)
			return true;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (wait_ms <= 0 || poll(&p, 1, wait_ms) <= 0)
			return false;
	}
}

/*
 * Reads exactly len bytes. Returns KV_OK, KV_TIMEDOUT past the deadline
 * (SO_RCVTIMEO), or KV_UNAVAILABLE when the connection broke (the node
 * went away).
 */
static kv_err
read_all(int fd, uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = recv(fd, buf, len, 0);
		if (n > 0) {
			buf += n;
			len -= (size_t) n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			return KV_TIMEDOUT;
		} else {
			return KV_UNAVAILABLE;
		}
	}
	return KV_OK;
}

/*
 * The first half of a call: takes a connection and writes the request
 * on it. KV_OK with the connection in *pc, or the call's failure (the
 * connection is then closed or given back).
 */
static kv_err
call_send(rpc_client *c, const rpc_request *req, int timeout_ms, pconn *pc)
{
	uint8_t *body = NULL;
	size_t len = 0;
	kv_err rv;

	if (timeout_ms < 1)
		timeout_ms = 1;
	if (!take(c, clock_mono_ms() + timeout_ms, pc))
		return KV_UNAVAILABLE;
	if ((rv = wire_pack_request(req, &body, &len)) != KV_OK) {
		give_back(c, *pc);
		return rv;
	}
	/* The frame: length, then the message, in one buffer. */
	uint8_t *frame = malloc(len + 4);
	if (frame == NULL) {
		free(body);
		give_back(c, *pc);
		return KV_ENOMEM;
	}
	for (int i = 0; i < 4; i++)
		frame[i] = (uint8_t) (len >> (8 * i));
	memcpy(frame + 4, body, len);
	free(body);
	bool sent = set_timeout(pc, timeout_ms) &&
	    rpc_send_all(pc->fd, frame, len + 4, 0);
	free(frame);
	if (!sent) {
		close(pc->fd);
		return errno == EAGAIN || errno == EWOULDBLOCK ? KV_TIMEDOUT :
		    KV_UNAVAILABLE;
	}
	return KV_OK;
}

/* The second half: reads the reply on pc, then gives pc back (or closes
 * it, when anything failed). */
static kv_err
call_recv(rpc_client *c, pconn pc, arena *a, rpc_response *resp)
{
	uint8_t hdr[4];
	kv_err rv;

	if ((rv = read_all(pc.fd, hdr, 4)) != KV_OK) {
		close(pc.fd);
		return rv;
	}
	uint32_t n = (uint32_t) hdr[0] | (uint32_t) hdr[1] << 8 |
	    (uint32_t) hdr[2] << 16 | (uint32_t) hdr[3] << 24;
	if (n > RPC_MAX_MESSAGE) {
		close(pc.fd);
		return KV_PROTO;
	}
	uint8_t *buf = malloc(n > 0 ? n : 1);
	if (buf == NULL) {
		close(pc.fd);
		return KV_ENOMEM;
	}
	if ((rv = read_all(pc.fd, buf, n)) != KV_OK) {
		free(buf);
		close(pc.fd);
		return rv;
	}
	give_back(c, pc);
	rv = wire_unpack_response(buf, n, a, resp);
	free(buf);
	return rv;
}

kv_err
rpc_call(rpc_client *c, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms)
{
	pconn pc;
	memset(resp, 0, sizeof(*resp));
	kv_err rv = call_send(c, req, timeout_ms, &pc);
	return rv == KV_OK ? call_recv(c, pc, a, resp) : rv;
}

struct rpc_pending {
	rpc_client *c;
	pconn pc;
};

kv_err
rpc_call_start(rpc_client *c, const rpc_request *req, int timeout_ms,
    rpc_pending **out)
{
	rpc_pending *p = malloc(sizeof(*p));
	*out = NULL;
	if (p == NULL)
		return KV_ENOMEM;
	p->c = c;
	kv_err rv = call_send(c, req, timeout_ms, &p->pc);
	if (rv != KV_OK) {
		free(p);
		return rv;
	}
	*out = p;
	return KV_OK;
}

kv_err
rpc_call_end(rpc_pending *p, arena *a, rpc_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	kv_err rv = call_recv(p->c, p->pc, a, resp);
	free(p);
	return rv;
}
