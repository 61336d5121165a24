/*
 * bus_exit.h — telling the cluster's nng modules that the process is
 * about to exit.
 *
 * nng 1.5.2, the version Debian 12 ships, can hang for good in nng_close
 * when a message arrives on the socket while it closes (nng issues #1543
 * and #1813, fixed in later releases): seen with a subscriber closing
 * while heartbeats arrive, and with a surveyor closing as a late answer
 * comes in. A process that is about to exit has no need to close its
 * sockets, so it calls bus_exit_begin() first; from then on feed_sub_close,
 * feed_pub_close, survey_resp_close, surveyor_close, peer_close and the
 * nframe closes stop their own threads and leave the sockets, and the
 * little memory their callbacks may still use, to the exit.
 */
#ifndef KV_BUS_EXIT_H
#define KV_BUS_EXIT_H

#include <stdbool.h>

/* bus_exit_begin: the process will exit; sockets stay open until then. */
void bus_exit_begin(void);

/* bus_exit_started: whether bus_exit_begin was called. Thread-safe. */
bool bus_exit_started(void);

#endif
