/*
 * member.h — the router as a member of the cluster: it answers surveys
 * (proto/survey.h) on the address its cluster-file line gives (bus=), so
 * that kv-admin status and the catalog node's health view list routers
 * too.
 */
#ifndef KV_ROUTER_MEMBER_H
#define KV_ROUTER_MEMBER_H

#include "err.h"
#include "router.h"

/*
 * member_open starts answering surveys for r (router r->index of the
 * cluster file), if its line gives a bus address. Returns KV_OK, KV_IO
 * when the address cannot be bound, KV_EINVAL or KV_ENOMEM.
 */
kv_err member_open(router *r);

/* member_close stops answering; safe without a member_open. */
void member_close(void);

#endif
