/*
 * bus.h — what the nng modules of proto/ (feed.c, survey.c, peer.c,
 * nframe.c) share: nng's headers, the translation of its errors into
 * kv_err (once, here), and the way every socket of the cluster is set up.
 * Private to proto/: nothing outside this folder includes nng.
 *
 * Every nng socket of the cluster dials without blocking, so a peer that
 * is not up yet is dialed again and again (from BUS_RECONNECT_MIN_MS,
 * doubling to BUS_RECONNECT_MAX_MS) until it is; a listener binds at
 * once and fails loudly. Messages larger than RPC_MAX_MESSAGE are refused
 * by the receiver before they are read.
 */
#ifndef KV_BUS_H
#define KV_BUS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "bus_exit.h"
#include "err.h"

#define BUS_RECONNECT_MIN_MS 20
#define BUS_RECONNECT_MAX_MS 500

/*
 * A thread that receives does so through an aio of its own (bus_recv),
 * and waits with no timeout unless it has something to do by a time; its
 * owner stops it by setting the thread's stop flag and then stopping the
 * aio (nng_aio_stop), which ends a wait at once and refuses every later
 * one, so the thread finds the flag at its next turn. Timeouts are kept
 * for real deadlines because each one that runs out costs CPU: nng
 * 1.5.2's timer thread expires an aio only once its time is strictly
 * past, and spins on the clock for the rest of that millisecond. Receive
 * ticks of 250 ms, the way threads used to look at their flag, kept an
 * idle cluster of five processes at 4 % of a core (0.8 % without them).
 * A thread that looks for something on a beat (a subscriber without a
 * connection) wakes every BUS_TICK_MS.
 *
 * Sockets are closed only once the threads that receive on them have
 * stopped: nng 1.5.2 can deadlock in nng_close while another thread is
 * blocked receiving on the socket (nng issues #1543 and #1813, fixed in
 * later releases).
 */
#define BUS_TICK_MS 250

/*
 * bus_recv receives a message on s through aio, waiting at most ms
 * (NNG_DURATION_INFINITE: until one comes, or until aio is stopped).
 * Returns nng's result: 0 with *m the message (the caller's), else
 * NNG_ETIMEDOUT, NNG_ECANCELED (stopped), NNG_ECLOSED, ...
 */
int bus_recv(nng_socket s, nng_aio *aio, nng_duration ms, nng_msg **m);

/* bus_err translates an nng error code (0 is KV_OK). */
kv_err bus_err(int nng_rv);

/*
 * bus_setup applies the cluster's options to socket s (message size
 * limit, reconnection times). Returns KV_OK or the error.
 */
kv_err bus_setup(nng_socket s);

/*
 * bus_listen binds s to url and listens; a failure is printed to stderr
 * with what (the socket's role, a string that lives as long as the
 * process) and returned (KV_IO when the address is taken or cannot be
 * bound). The listener is guarded (bus_guard.c): should nng stop taking
 * its connections (nng 1.5.2's issue #1518, after a peer left during the
 * handshake), it is made again within about 10 s. A socket of a
 * request, survey or publish protocol is guarded; its owner calls
 * bus_unlisten(s) before closing it.
 */
kv_err bus_listen(nng_socket s, const char *url, const char *what);

/* bus_unlisten: s's listener is no longer guarded (s is being closed). */
void bus_unlisten(nng_socket s);

/*
 * A fault for tests and chaos experiments. bus_listen_pause closes the
 * listener bus_listen made on s, and with it every connection it took,
 * without closing s: its peers see their connections break and cannot
 * connect again, as if s had closed. bus_listen_resume listens again on
 * the same address (KV_IO while it is still taken: try again). Neither
 * waits on nng's reaper, which nng_close does: in nng 1.5.2 a reaper can
 * stop for good (see bus_dialer_reconnect), and a close then never
 * returns. KV_EINVAL: s has no guarded listener, or is not paused (not
 * resumed).
 */
kv_err bus_listen_pause(nng_socket s);
kv_err bus_listen_resume(nng_socket s);

/* bus_guard_add guards listener l of s on url (bus_listen calls it). */
void bus_guard_add(nng_socket s, nng_listener l, const char *url,
    const char *what);

/* For tests: the guard stops (off) or resumes probing, and how many
 * listeners it has made again in this process. */
void bus_guard_set_off(bool off);
unsigned bus_guard_relistened(void);

/*
 * bus_dial starts dialing url from s without waiting for the connection
 * (nng dials again until it succeeds). *id, when not NULL, is set to the
 * dialer's id before the first attempt, so that a pipe callback can tell
 * whose connection it sees. KV_OK, KV_EINVAL for a URL nng cannot dial,
 * or KV_ENOMEM.
 */
kv_err bus_dial(nng_socket s, const char *url, atomic_int *id);

/*
 * A dialer that is replaced when it stays without a connection. nng
 * 1.5.2 once left a node's dialer without a connection to another node
 * for over 20 s while that node was up (it had restarted twice within a
 * few seconds; nng's bug #1518, a connection broken during its
 * handshake, is the likely cause). So every dialer that the cluster's
 * processes keep (the node-to-node seam, the surveys, the catalog feed)
 * is one of these: its owner counts its connections from its socket's
 * pipe callbacks (bus_dialer_pipe) and, whenever it finds none while it
 * wants one, calls bus_dialer_missed. Once connections have been missed
 * for BUS_REDIAL_MS (six of nng's redials at their longest interval),
 * the dialer is closed and a fresh one started; a peer that is really
 * down only gets a fresh dialer every few seconds. A fresh dialer dials
 * at once, then again within BUS_DOWN_RECONNECT_MS of each failure,
 * instead of starting again from BUS_RECONNECT_MIN_MS. (nng 1.5.2 draws
 * each wait at random below its setting, but half its draws come out
 * negative, which is no wait: about four attempts a second here, where
 * the doubling from 20 ms, restarted at every replacement, made it up
 * to twelve.)
 *
 * A dialer may also be set up without dialing (bus_dialer_init), for a
 * peer that is not expected up (a standby node of the cluster file): it
 * starts at the first bus_dialer_want or miss, so that a standby node
 * costs nothing until something wants it.
 *
 * A connection can also be counted and carry nothing. Seen: after a node
 * restarted, the catalog node held two connections whose peer was gone,
 * counted as up and read by nobody, so that every call to that node timed
 * out and no redial came, for good, while the node answered everyone
 * else. (nng 1.5.2 also keeps, now and then, a live pipe of a dialer that
 * was closed while it connected.) So the owner also says what came of
 * each exchange over the connection: bus_dialer_answered when an answer
 * came, bus_dialer_silent when none came by its deadline. Once a
 * connection has been silent for BUS_SILENT_MS with no answer and no new
 * pipe in between, every pipe d counts is closed (a pipe nng no longer
 * knows is dropped from the count): the dialer dials again, or, with no
 * pipe left, the misses above replace it.
 *
 * Locking rule: the socket and the URL are written by bus_dialer_init,
 * before the dialer is shared, and only read afterwards; the ids, the
 * connection count, `dialing`, down_since and silent_since are atomics;
 * the first dial and a replacement happen under mu (a miss that finds it
 * taken leaves the replacement to the one that holds it); pipes_mu
 * guards the pipe ids (and the ids the last repair closed) and is held
 * for no call into nng.
 */
#define BUS_REDIAL_MS 3000
#define BUS_DOWN_RECONNECT_MS 1000
#define BUS_SILENT_MS 5000
#define BUS_DIALER_PIPES 8 /* pipe ids kept (more are only counted) */

typedef struct bus_dialer {
	nng_socket sock;
	char *url;
	atomic_int id;      /* nng's id of the current dialer */
	atomic_int old_id;  /* of the one it replaced (its pipes may close
	                     * after the replacement) */
	atomic_int pipes;   /* open connections */
	uint32_t pipe_ids[BUS_DIALER_PIPES]; /* theirs (0: a free slot) */
	uint32_t closed_ids[BUS_DIALER_PIPES]; /* closed by the last repair */
	int untracked;      /* open pipes whose ids found no slot */
	pthread_mutex_t pipes_mu;
	/* When an exchange first went unanswered since one was last
	 * answered (bus_mono_ms; 0: none). */
	_Atomic int64_t silent_since;
	/* When a connection was first missed since one was last found
	 * (bus_mono_ms; 0: none missed). */
	_Atomic int64_t down_since;
	atomic_bool dialing; /* started (it stays so) */
	pthread_mutex_t mu;
} bus_dialer;

/*
 * bus_dialer_init sets d (zeroed: the pipe callbacks of other dialers of
 * s may already look at it) up to dial url from s, without dialing yet.
 * The socket's pipe callbacks must be set before, and must call
 * bus_dialer_pipe for the pipes d owns. KV_OK, KV_EINVAL (a URL nng
 * cannot dial), KV_ENOMEM; on failure d holds nothing.
 */
kv_err bus_dialer_init(bus_dialer *d, nng_socket s, const char *url);

/* bus_dialer_start: bus_dialer_init, then dialing at once (bus_dial). */
kv_err bus_dialer_start(bus_dialer *d, nng_socket s, const char *url);

/* bus_dialer_want starts d dialing if it has not started. Thread-safe. */
void bus_dialer_want(bus_dialer *d);

/* bus_dialer_fini frees d's own memory, once its socket is closed. */
void bus_dialer_fini(bus_dialer *d);

/* Whether pipe p came from d's dialer or the one it replaced. */
bool bus_dialer_owns(bus_dialer *d, nng_pipe p);

/* Counts a pipe event of d's pipe p (ADD_PRE up, REM_POST down; other
 * events are ignored). */
void bus_dialer_pipe(bus_dialer *d, nng_pipe p, nng_pipe_ev ev);

/* Whether d has a connection; one found ends a miss. */
bool bus_dialer_up(bus_dialer *d);

/*
 * For an owner that wanted a connection and found none: starts the
 * dialer if it has not started, else notes when the miss began and
 * replaces the dialer once it has lasted BUS_REDIAL_MS. A replacement
 * closes the old dialer: as for bus_dialer_reconnect, the owner must
 * have no exchange under way on d's socket.
 */
void bus_dialer_missed(bus_dialer *d);

/* An exchange over d's connection was answered: ends a silence. */
void bus_dialer_answered(bus_dialer *d);

/*
 * An exchange over d's connection got no answer by its deadline: notes
 * when the silence began; true once it has lasted BUS_SILENT_MS, when
 * the owner should call bus_dialer_reconnect.
 */
bool bus_dialer_silent(bus_dialer *d);

/*
 * Closes d's pipes after a silence of BUS_SILENT_MS (once for several
 * callers) and replaces its dialer, so that it connects again. The owner
 * must have no exchange under way on d's socket: nng 1.5.2 closing a
 * pipe while a request context sends or waits on the socket can stop its
 * reaper for good (no pipe of the process is ever removed again).
 *
 * The peer dying while a call waits on its connection (a node killed
 * during a move) can close the pipe the same way, which no owner can
 * prevent. A stopped reaper sends no REM_POST (d counts the dead pipe up
 * for good) and nng 1.5.2's dialer redials only once the reaper has
 * removed its pipe: the connection would stay silent for good, a
 * repair's close changing nothing. So a repair also starts a fresh
 * dialer, which dials at once, and a pipe still counted at the next
 * repair after this one closed it is forgotten (and logged: the reaper
 * has stopped).
 */
void bus_dialer_reconnect(bus_dialer *d);

/* Tests: closes d's dialer, as if nng had stopped dialing; as for
 * bus_dialer_reconnect, with no exchange under way on d's socket. */
void bus_dialer_plant_dead(bus_dialer *d);

/*
 * Tests: from now on (or no longer), the process behaves as if nng's
 * reaper had stopped: a repair's close of a pipe changes nothing (its
 * dialer, still connected, never dials again) and no REM_POST is
 * counted.
 */
void bus_plant_stopped_reaper(bool on);

/* bus_now_us: CLOCK_REALTIME in microseconds. */
int64_t bus_now_us(void);

/* bus_mono_ms: CLOCK_MONOTONIC in milliseconds. */
int64_t bus_mono_ms(void);

#endif
