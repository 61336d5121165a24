/*
 * serve.c — the null server (see serve.h). A client's answers are queued
 * in its output buffer and written as the socket takes them; EPOLLOUT is
 * asked for only while some are left.
 */
#define _GNU_SOURCE /* accept4: non-blocking sockets in one call */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"

#define MAX_EVENTS 256
#define READ_CHUNK (16 * 1024)

static const char ok_answer[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/x-amz-json-1.0\r\n"
    "Content-Length: 2\r\n"
    "\r\n"
    "{}";

static const char bad_answer[] =
    "HTTP/1.1 400 Bad Request\r\n"
    "Content-Length: 0\r\n"
    "Connection: close\r\n"
    "\r\n";

typedef struct client client;
struct client {
	client *prev, *next; /* every open client, to free them at the end */
	int fd;
	bool closing;  /* close once the output is written */
	bool want_out; /* EPOLLOUT is in the interest set */
	http_buf in;
	http_buf out;
};

static client *clients;

static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

static void
drop(client *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		clients = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	close(c->fd);
	http_buf_fini(&c->in);
	http_buf_fini(&c->out);
	free(c);
}

/* Writes what it can; returns false when the client is gone. */
static bool
flush(int ep, client *c)
{
	size_t off = 0;
	while (off < c->out.len) {
		ssize_t n = send(c->fd, c->out.p + off, c->out.len - off,
		    MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t) n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		return false;
	}
	http_buf_consume(&c->out, off);
	if (c->out.len == 0 && c->closing)
		return false;
	bool out = c->out.len > 0;
	if (out != c->want_out) {
		struct epoll_event ev = {
			.events = out ? EPOLLIN | EPOLLOUT : EPOLLIN,
			.data.ptr = c };
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
		c->want_out = out;
	}
	return true;
}

/* Reads and answers; returns false when the client is gone. */
static bool
readable(int ep, client *c, uint64_t *served)
{
	for (;;) {
		if (http_buf_reserve(&c->in, READ_CHUNK) != KV_OK)
			return false;
		ssize_t n = recv(c->fd, c->in.p + c->in.len,
		    c->in.cap - c->in.len - 1, 0);
		if (n == 0)
			return false;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return false;
		}
		c->in.len += (size_t) n;
		c->in.p[c->in.len] = '\0';
		if ((size_t) n < READ_CHUNK)
			break;
	}
	while (!c->closing && c->in.len > 0) {
		bool done = false, close_after = false;
		size_t total = 0;
		kv_err e = http_req_parse(c->in.p, c->in.len, &done, &total,
		    &close_after);
		if (e != KV_OK) {
			c->closing = true;
			if (http_buf_append(&c->out, bad_answer,
			    sizeof(bad_answer) - 1) != KV_OK)
				return false;
			break;
		}
		if (!done)
			break;
		if (http_buf_append(&c->out, ok_answer,
		    sizeof(ok_answer) - 1) != KV_OK)
			return false;
		(*served)++;
		http_buf_consume(&c->in, total);
		c->closing = close_after;
	}
	return flush(ep, c);
}

static void
accept_all(int ep, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or out of descriptors for now */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		client *c = calloc(1, sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		http_buf_init(&c->in);
		http_buf_init(&c->out);
		c->next = clients;
		if (clients != NULL)
			clients->prev = c;
		clients = c;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			drop(c);
	}
}

kv_err
serve_null(int port)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (lfd < 0)
		return KV_IO;
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t) port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(lfd, (struct sockaddr *) &sin, sizeof(sin)) < 0 ||
	    listen(lfd, 1024) < 0) {
		int err = errno;
		close(lfd);
		errno = err;
		return KV_IO;
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event lev = { .events = EPOLLIN, .data.ptr = NULL };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) < 0) {
		int err = errno;
		if (ep >= 0)
			close(ep);
		close(lfd);
		errno = err;
		return KV_IO;
	}
	fprintf(stderr, "kv-load: null server on http://127.0.0.1:%d "
	    "(Ctrl-C stops it)\n", port);
	uint64_t served = 0;
	kv_err rv = KV_OK;
	while (!stop_signal) {
		struct epoll_event evs[MAX_EVENTS];
		int n = epoll_wait(ep, evs, MAX_EVENTS, 1000);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rv = KV_IO;
			break;
		}
		for (int i = 0; i < n; i++) {
			client *c = evs[i].data.ptr;
			if (c == NULL) {
				accept_all(ep, lfd);
				continue;
			}
			bool alive = true;
			if (evs[i].events & EPOLLOUT)
				alive = flush(ep, c);
			if (alive &&
			    (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
				alive = readable(ep, c, &served);
			if (!alive)
				drop(c);
		}
	}
	fprintf(stderr, "kv-load: null server answered %" PRIu64
	    " requests\n", served);
	while (clients != NULL)
		drop(clients);
	close(ep);
	close(lfd);
	return rv;
}
