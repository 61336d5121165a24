/*
 * ops_status.c — the status page: GET /status answers a page that polls
 * GET /status.json every second and draws the cluster: its nodes (up or
 * not, from one survey), every table with its partitions (owner, hash
 * range, epoch, items, size) and a heat map of each partition's consumed
 * capacity against its ceiling, a partition whose bucket is empty or that
 * throttled since the last poll marked hot.
 *
 * The JSON carries each partition's counters as its owner reports them
 * (proto/wire.h, part_stats): units charged and requests throttled since
 * the owner started, and the bucket's rate and credit (micro half-units);
 * the page turns two polls into rates. Nodes that do not answer the
 * survey show as down, their partitions without counters.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "member.h"
#include "route.h"

static const part_stats *
find_stats(const survey_result *res, uint32_t node, uint32_t table_id,
    uint32_t part)
{
	if (res[node].outcome != SURVEY_ANSWERED)
		return NULL;
	for (size_t i = 0; i < res[node].m.n_stats; i++) {
		const part_stats *s = &res[node].m.stats[i];
		if (s->table_id == table_id && s->part == part)
			return s;
	}
	return NULL;
}

static json_t *
partition_json(const partition *p, const part_stats *s)
{
	char lo[17], last[17];
	snprintf(lo, sizeof(lo), "%016llx", (unsigned long long) p->lo);
	snprintf(last, sizeof(last), "%016llx", (unsigned long long) p->last);
	json_t *j = json_pack("{s:I,s:s,s:s,s:I,s:I,s:b}", "id",
	    (json_int_t) p->id, "lo", lo, "last", last, "node",
	    (json_int_t) p->node, "epoch", (json_int_t) p->epoch, "keyed",
	    p->keyed);
	if (s != NULL)
		json_object_update_new(j, json_pack(
		    "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		    "items", (json_int_t) s->items,
		    "bytes", (json_int_t) s->bytes,
		    "read_charged", (json_int_t) s->read_charged,
		    "write_charged", (json_int_t) s->write_charged,
		    "read_throttled", (json_int_t) s->read_throttled,
		    "write_throttled", (json_int_t) s->write_throttled,
		    "read_rate", (json_int_t) s->read_rate,
		    "write_rate", (json_int_t) s->write_rate,
		    "read_credit", (json_int_t) s->read_credit,
		    "write_credit", (json_int_t) s->write_credit));
	return j;
}

static const char *
status_name(table_status s)
{
	switch (s) {
	case TABLE_CREATING: return "CREATING";
	case TABLE_DELETING: return "DELETING";
	case TABLE_UPDATING: return "UPDATING";
	case TABLE_ACTIVE: break;
	}
	return "ACTIVE";
}

void
ops_status_json(router *r, reply *out)
{
	arena a;
	survey_result res[CONFIG_MAX_NODES];
	struct timespec now;

	arena_init(&a);
	if (member_survey_nodes(r, &a, res) != KV_OK)
		memset(res, 0, sizeof(res));
	clock_gettime(CLOCK_REALTIME, &now);
	json_t *nodes = json_array();
	for (uint32_t i = 0; i < r->cfg.n_nodes; i++)
		json_array_append_new(nodes, json_pack("{s:I,s:s,s:b}",
		    "index", (json_int_t) i, "url", r->cfg.nodes[i].url, "up",
		    res[i].outcome == SURVEY_ANSWERED));
	json_t *tables = json_array();
	route_read_lock();
	const catalog *cat = route_current(r);
	for (size_t i = 0; cat != NULL && i < cat->n_tables; i++) {
		const table *t = &cat->tables[i];
		json_t *parts = json_array();
		for (size_t k = 0; k < t->n_parts; k++) {
			const partition *p = &t->parts[k];
			json_array_append_new(parts, partition_json(p,
			    p->node < r->cfg.n_nodes ? find_stats(res, p->node,
			    t->id, p->id) : NULL));
		}
		json_array_append_new(tables, json_pack(
		    "{s:s,s:I,s:s,s:s,s:b,s:o}", "name", t->name, "id",
		    (json_int_t) t->id, "status", status_name(t->status),
		    "billing", t->billing == BILLING_PROVISIONED ?
		    "PROVISIONED" : "PAY_PER_REQUEST", "index", t->base_id != 0,
		    "partitions", parts));
	}
	json_int_t version = cat != NULL ? (json_int_t) cat->version : 0;
	route_read_unlock();
	json_t *j = json_pack("{s:I,s:s,s:I,s:I,s:I,s:o,s:o}", "time_ms",
	    (json_int_t) now.tv_sec * 1000 + now.tv_nsec / 1000000, "router",
	    r->listen, "catalog_version", version, "partition_rcu",
	    (json_int_t) r->cfg.partition_rcu, "partition_wcu",
	    (json_int_t) r->cfg.partition_wcu, "nodes", nodes, "tables",
	    tables);
	arena_fini(&a);
	api_reply_json(out, j);
}

const char ops_status_page[] =
"<!doctype html>\n"
"<html><head><meta charset=\"utf-8\"><title>kv status</title>\n"
"<style>\n"
"body{font:14px system-ui,sans-serif;margin:20px;color:#222}\n"
"h1{font-size:20px} h2{font-size:16px;margin:18px 0 6px}\n"
".nodes span{display:inline-block;margin-right:10px;padding:2px 8px;"
"border-radius:4px;background:#d7f5d7}\n"
".nodes span.down{background:#f7c8c8}\n"
".parts{display:flex;flex-wrap:wrap;gap:4px}\n"
".part{width:150px;padding:4px 6px;border:2px solid #ccc;"
"border-radius:4px;font-size:11px;line-height:1.35}\n"
".part.hot{border-color:#d00;box-shadow:0 0 6px #f33}\n"
".part .bar{height:6px;background:#eee;margin-top:3px}\n"
".part .bar i{display:block;height:6px;background:#e55}\n"
".meta{color:#666;font-size:12px}\n"
"</style></head><body>\n"
"<h1>kv cluster <span id=\"router\" class=\"meta\"></span></h1>\n"
"<div class=\"nodes\" id=\"nodes\"></div>\n"
"<p class=\"meta\">Each partition: its owner, hash range, items and "
"size; the bar is the write capacity it consumed over the last second "
"against its ceiling; red: hot (its bucket is empty or it throttled "
"since the last poll).</p>\n"
"<div id=\"tables\"></div>\n"
"<script>\n"
"let last = null;\n"
"function el(tag, cls, text) { const e = document.createElement(tag);"
" if (cls) e.className = cls; if (text !== undefined) e.textContent ="
" text; return e; }\n"
"function key(t, p) { return t.id + '/' + p.id + '/' + p.epoch; }\n"
"function draw(s) {\n"
"  document.getElementById('router').textContent = 'router ' + s.router"
" + ', catalog version ' + s.catalog_version;\n"
"  const nodes = document.getElementById('nodes'); nodes.innerHTML = '';\n"
"  for (const n of s.nodes) nodes.appendChild(el('span', n.up ? 'node'"
" : 'node down', 'node ' + n.index + (n.up ? ' up' : ' DOWN')));\n"
"  const prev = last, dt = prev ? (s.time_ms - prev.time_ms) / 1000 : 0;\n"
"  const seen = {};\n"
"  const root = document.getElementById('tables'); root.innerHTML = '';\n"
"  for (const t of s.tables) {\n"
"    const h = el('h2', 'table', t.name); h.dataset.table = t.name;\n"
"    h.appendChild(el('span', 'meta', '  ' + t.status + ', ' + t.billing"
" + (t.index ? ', index' : '')));\n"
"    root.appendChild(h);\n"
"    const box = el('div', 'parts'); root.appendChild(box);\n"
"    for (const p of t.partitions) {\n"
"      const k = key(t, p); seen[k] = p;\n"
"      const before = prev && prev.parts[k];\n"
"      let heat = 0, hot = false;\n"
"      if (p.write_rate !== undefined) {\n"
"        hot = p.write_credit <= p.write_rate / 20 ||"
" p.read_credit <= p.read_rate / 20;\n"
"        if (before && dt > 0) {\n"
"          const w = (p.write_charged - before.write_charged) / 2 / dt;\n"
"          const ceil = p.write_rate / 2e6;\n"
"          heat = ceil > 0 ? w / ceil : 0;\n"
"          if (p.write_throttled > before.write_throttled ||"
" p.read_throttled > before.read_throttled) hot = true;\n"
"        }\n"
"      }\n"
"      const d = el('div', 'part' + (hot ? ' hot' : ''));\n"
"      d.dataset.table = t.name; d.dataset.part = p.id;\n"
"      d.appendChild(el('div', '', 'part ' + p.id + ' on node ' + p.node"
" + ' (epoch ' + p.epoch + ')'));\n"
"      d.appendChild(el('div', 'meta', p.lo.slice(0, 6) + '..-' +"
" p.last.slice(0, 6) + '..'));\n"
"      if (p.items !== undefined) d.appendChild(el('div', 'meta', p.items"
" + ' items, ' + p.bytes + ' B'));\n"
"      else d.appendChild(el('div', 'meta', 'owner not answering'));\n"
"      const bar = el('div', 'bar'), fill = el('i');\n"
"      fill.style.width = Math.min(100, Math.round(heat * 100)) + '%';\n"
"      bar.appendChild(fill); d.appendChild(bar);\n"
"      box.appendChild(d);\n"
"    }\n"
"  }\n"
"  last = { time_ms: s.time_ms, parts: seen };\n"
"  document.body.dataset.polls = (+(document.body.dataset.polls || 0) + 1);\n"
"}\n"
"async function poll() {\n"
"  try { const r = await fetch('/status.json'); draw(await r.json()); }\n"
"  catch (e) { document.getElementById('router').textContent ="
" 'not answering: ' + e; }\n"
"  setTimeout(poll, 1000);\n"
"}\n"
"poll();\n"
"</script></body></html>\n";
