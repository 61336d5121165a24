/*
 * bus_fixture.h — what the nng tests of proto/ (feed, survey, peer) share:
 * a fresh temporary folder for ipc:// addresses, removed afterwards (and
 * swept by a later run if its test was killed), the clocks, closing
 * several things at once, and waiting for a condition with a deadline
 * instead of fixed sleeps (so the tests are fast when the machine is idle
 * and still pass when it is loaded).
 */
#ifndef KV_BUS_FIXTURE_H
#define KV_BUS_FIXTURE_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static inline int64_t
tu_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* tu_now_us: Unix time in microseconds, the clock the feed stamps. */
static inline int64_t
tu_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void
tu_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/*
 * TU_WAIT_FOR evaluates cond every 2 ms until it holds or ms have passed;
 * its value is whether it held.
 */
#define TU_WAIT_FOR(cond, ms) __extension__ ({ \
	int64_t tu_end_ = tu_mono_ms() + (ms); \
	bool tu_ok_; \
	while (!(tu_ok_ = (cond)) && tu_mono_ms() < tu_end_) \
		tu_sleep_ms(2); \
	tu_ok_; \
})

/*
 * tu_parallel runs fn(args[0..n)) on n threads at once and waits for them
 * all: closing several things, each of which may wait for its threads,
 * costs the longest wait instead of their sum.
 */
static inline void
tu_parallel(void *(*fn)(void *), void *const *args, size_t n)
{
	pthread_t th[16];
	cr_assert_leq(n, 16);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, fn, args[i]), 0);
	for (size_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* The temporary folder of the running test (tu_dir_make). */
static char tu_dir[64];

static inline void tu_remove_dir(const char *dir);

/*
 * tu_sweep removes the folders /tmp/<prefix>-<pid>.* of test processes
 * that are gone without their teardown (a test that timed out is
 * killed), so that such runs do not fill /tmp.
 */
static inline void
tu_sweep(const char *prefix)
{
	DIR *d = opendir("/tmp");
	if (d == NULL)
		return;
	size_t n = strlen(prefix);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		long pid;
		char rest[16];
		if (strncmp(e->d_name, prefix, n) != 0 || e->d_name[n] != '-' ||
		    sscanf(e->d_name + n + 1, "%ld.%15s", &pid, rest) != 2 ||
		    pid <= 0 || kill((pid_t) pid, 0) == 0 || errno != ESRCH)
			continue;
		char dir[300];
		snprintf(dir, sizeof(dir), "/tmp/%s", e->d_name);
		tu_remove_dir(dir);
	}
	closedir(d);
}

static inline void
tu_dir_make(const char *prefix)
{
	tu_sweep(prefix);
	snprintf(tu_dir, sizeof(tu_dir), "/tmp/%s-%ld.XXXXXX", prefix,
	    (long) getpid());
	cr_assert_not_null(mkdtemp(tu_dir), "mkdtemp");
}

/* tu_url writes "ipc://<dir>/<name>" into out. */
static inline void
tu_url(char *out, size_t outlen, const char *name)
{
	int n = snprintf(out, outlen, "ipc://%s/%s", tu_dir, name);
	cr_assert(n > 0 && (size_t) n < outlen);
}

/*
 * A plain Unix-domain listener at an ipc:// URL, which speaks no nng: it
 * only shows whether anyone dialed it. tu_unix_listen returns its
 * descriptor; tu_unix_dialed accepts what is waiting, without blocking,
 * and says whether anything was.
 */
static inline int
tu_unix_listen(const char *url)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	cr_assert_eq(strncmp(url, "ipc://", 6), 0, "%s", url);
	cr_assert_lt(strlen(url + 6), sizeof(sa.sun_path));
	strcpy(sa.sun_path, url + 6);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0,
	    "bind %s: %s", url, strerror(errno));
	cr_assert_eq(listen(fd, 64), 0);
	return fd;
}

static inline bool
tu_unix_dialed(int fd)
{
	bool any = false;
	int c;
	while ((c = accept(fd, NULL, NULL)) >= 0) {
		close(c);
		any = true;
	}
	return any;
}

/*
 * tu_black_hole takes the first connection dialed to the plain listener
 * fd (tu_unix_listen) at url within 5 s, completes nng's handshake on it
 * as a socket of protocol `proto` (nng's 8-byte header: 0, 'S', 'P', 0,
 * the protocol in two bytes, two zeros) and then never reads or answers
 * again. The listener is closed and its address freed, so that a real
 * socket can listen there; the connection stays open (the returned
 * descriptor) until the test closes it: to the dialer, a connection that
 * carries nothing.
 */
static inline int
tu_black_hole(int fd, const char *url, uint16_t proto)
{
	int c = -1;
	int64_t end = tu_mono_ms() + 5000;
	while ((c = accept(fd, NULL, NULL)) < 0 && tu_mono_ms() < end)
		tu_sleep_ms(5);
	cr_assert_geq(c, 0, "nobody dialed %s", url);
	uint8_t hdr[8];
	size_t got = 0;
	while (got < sizeof(hdr) && tu_mono_ms() < end) {
		ssize_t n = read(c, hdr + got, sizeof(hdr) - got);
		if (n > 0)
			got += (size_t) n;
		else if (n == 0)
			break;
		else
			tu_sleep_ms(5);
	}
	cr_assert_eq(got, sizeof(hdr), "the dialer's header");
	uint8_t mine[8] = { 0, 'S', 'P', 0, (uint8_t) (proto >> 8),
		(uint8_t) proto, 0, 0 };
	cr_assert_eq(write(c, mine, sizeof(mine)), (ssize_t) sizeof(mine));
	close(fd);
	unlink(url + 6);
	return c;
}

/* tu_remove_dir removes dir and whatever sockets are left in it. */
static inline void
tu_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d != NULL) {
		struct dirent *e;
		char path[600];
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* tu_dir_remove removes the running test's folder. */
static inline void
tu_dir_remove(void)
{
	if (tu_dir[0] != '\0')
		tu_remove_dir(tu_dir);
	tu_dir[0] = '\0';
}

/*
 * A teardown's watchdog: tu_watch_begin starts a thread that, should one
 * step named by tu_watch_step last over TU_WATCH_MS, says which on
 * stderr (once), so that a teardown hung in nng's close (bus.h: a
 * stopped reaper) names the close before criterion's timeout ends the
 * test; tu_watch_end stops it.
 */
#ifndef TU_WATCH_MS
#define TU_WATCH_MS 15000
#endif

static _Atomic(const char *) tu_watch_what_;
static _Atomic int64_t tu_watch_since_;
static atomic_bool tu_watch_on_;
static pthread_t tu_watch_th_;

static void *
tu_watch_run_(void *arg)
{
	bool told = false;
	(void) arg;
	while (atomic_load(&tu_watch_on_)) {
		tu_sleep_ms(50);
		int64_t took = tu_mono_ms() - atomic_load(&tu_watch_since_);
		if (!told && took > TU_WATCH_MS) {
			fprintf(stderr, "teardown: still %s after %lld ms\n",
			    atomic_load(&tu_watch_what_), (long long) took);
			told = true;
		}
	}
	return NULL;
}

static inline void
tu_watch_step(const char *what)
{
	atomic_store(&tu_watch_since_, tu_mono_ms());
	atomic_store(&tu_watch_what_, what);
}

static inline void
tu_watch_begin(const char *what)
{
	tu_watch_step(what);
	atomic_store(&tu_watch_on_, true);
	cr_assert_eq(pthread_create(&tu_watch_th_, NULL, tu_watch_run_, NULL),
	    0);
}

static inline void
tu_watch_end(void)
{
	atomic_store(&tu_watch_on_, false);
	pthread_join(tu_watch_th_, NULL);
}

#endif
