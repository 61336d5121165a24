/*
 * metrics.c — Prometheus text for partition counters (see metrics.h).
 */
#include "metrics.h"

#include <inttypes.h>

typedef enum kind { COUNTER, GAUGE } kind;

/* Which figure of a part_stats a family shows, in capacity units. */
typedef double (*figure_fn)(const part_stats *s);

static double f_rc(const part_stats *s) { return s->read_charged / 2.0; }
static double f_wc(const part_stats *s) { return s->write_charged / 2.0; }
static double f_ra(const part_stats *s) { return (double) s->read_admitted; }
static double f_wa(const part_stats *s) { return (double) s->write_admitted; }
static double f_rt(const part_stats *s) { return (double) s->read_throttled; }
static double f_wt(const part_stats *s) { return (double) s->write_throttled; }
static double f_rr(const part_stats *s) { return s->read_rate / 2e6; }
static double f_wr(const part_stats *s) { return s->write_rate / 2e6; }
static double f_items(const part_stats *s) { return (double) s->items; }
static double f_bytes(const part_stats *s) { return (double) s->bytes; }

double
metrics_burst_units(int64_t level, int64_t rate)
{
	return level > rate ? (double) (level - rate) / 2e6 : 0;
}

static double f_rb(const part_stats *s)
{
	return metrics_burst_units(s->read_credit, s->read_rate);
}

static double f_wb(const part_stats *s)
{
	return metrics_burst_units(s->write_credit, s->write_rate);
}

static const struct family {
	const char *name, *help;
	kind k;
	figure_fn fig;
} families[] = {
	{ "kv_partition_consumed_read_units_total",
	    "Read capacity units charged to the partition.", COUNTER, f_rc },
	{ "kv_partition_consumed_write_units_total",
	    "Write capacity units charged to the partition.", COUNTER, f_wc },
	{ "kv_partition_admitted_reads_total",
	    "Read requests the partition's read bucket let through.",
	    COUNTER, f_ra },
	{ "kv_partition_admitted_writes_total",
	    "Write requests the partition's write bucket let through.",
	    COUNTER, f_wa },
	{ "kv_partition_throttled_reads_total",
	    "Read requests refused: the read bucket was empty.", COUNTER,
	    f_rt },
	{ "kv_partition_throttled_writes_total",
	    "Write requests refused: the write bucket was empty.", COUNTER,
	    f_wt },
	{ "kv_partition_read_ceiling_units",
	    "Read capacity units per second the partition may consume.",
	    GAUGE, f_rr },
	{ "kv_partition_write_ceiling_units",
	    "Write capacity units per second the partition may consume.",
	    GAUGE, f_wr },
	{ "kv_partition_read_burst_credit_units",
	    "Unused read capacity kept as burst credit.", GAUGE, f_rb },
	{ "kv_partition_write_burst_credit_units",
	    "Unused write capacity kept as burst credit.", GAUGE, f_wb },
	{ "kv_partition_items", "Items stored in the partition.", GAUGE,
	    f_items },
	{ "kv_partition_bytes",
	    "DynamoDB sizes of the partition's items, summed.", GAUGE,
	    f_bytes },
};

/* Writes s as a label value: backslash, quote and newline escaped. */
static void
label(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

void
metrics_write_parts(FILE *f, const metrics_source *srcs, size_t n,
    metrics_name_fn name_of, void *arg)
{
	for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
		const struct family *fm = &families[k];
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fm->name, fm->help,
		    fm->name, fm->k == COUNTER ? "counter" : "gauge");
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < srcs[i].n; j++) {
				const part_stats *s = &srcs[i].stats[j];
				const char *name = name_of != NULL ?
				    name_of(arg, s->table_id) : NULL;
				fprintf(f, "%s{", fm->name);
				if (name != NULL) {
					fputs("table=\"", f);
					label(f, name);
					fputs("\",", f);
				}
				fprintf(f, "table_id=\"%" PRIu32 "\",partition="
				    "\"%" PRIu32 "\",node=\"%" PRIu32 "\"} %.17g\n",
				    s->table_id, s->part, srcs[i].node,
				    fm->fig(s));
			}
		}
	}
}
