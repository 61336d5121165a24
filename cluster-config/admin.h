/*
 * admin.h — what kv-admin's files share: the survey of every member, one
 * sample of every partition's counters, and the commands of
 * admin_reshape.c.
 */
#ifndef KV_ADMIN_H
#define KV_ADMIN_H

#include <stdbool.h>

#include "config.h"
#include "rpc.h"
#include "survey.h"

#define TIMEOUT_MS 5000 /* generous: a loaded node is slow, not gone */
/* A member that has not connected by then is not reachable. */
#define SURVEY_CONNECT_MS 500
/* Generous too: a node under load answers late, but it answers. */
#define SURVEY_DEADLINE_MS 2000

/* Every member of the cluster: nodes first, then routers. */
typedef struct members {
	surveyor *sv;
	survey_members all;
	survey_target *t; /* all.t */
	size_t n;
} members;

kv_err members_open(const config *cfg, members *m);

/* One survey of every member; results[i] for m->t[i]. */
void members_ask(members *m, uint32_t what, arena *a,
    survey_result *results);

/* One sample of every node's partition counters (one survey). */
typedef struct sample {
	arena a;
	double t; /* seconds, monotonic */
	survey_result res[SURVEY_MEMBERS];
	catalog *cat; /* owned; NULL when node 0 is down */
} sample;

double mono_s(void);
void sample_take(rpc_client **nodes, members *mb, sample *s);
void sample_fini(sample *s);
const part_stats *find_stats(const sample *s, uint32_t node,
    uint32_t table_id, uint32_t part);
/* A counter's rate per second between two samples. */
double rate(uint64_t now, uint64_t before, double dt);

/* admin_reshape.c */
int admin_split(rpc_client *catalog_node, int argc, char **argv);
int admin_move(rpc_client *catalog_node, int argc, char **argv);
int admin_events(rpc_client *catalog_node);
int admin_node(rpc_client *catalog_node, int argc, char **argv);

/* index pause|resume TABLE INDEX: hold or let go a global index's
 * replication (its records wait in the outboxes). */
int admin_index(rpc_client *catalog_node, int argc, char **argv);
int admin_hot_keys(const config *cfg, rpc_client **nodes, const char *name,
    bool as_json);
int admin_status_json(const config *cfg, rpc_client **nodes, members *mb);

#endif
