/*
 * pace.c — open-loop due times (see pace.h). Within a step the rate is
 * r(s) = a + k s, so the requests due after s seconds are a s + k s^2 / 2;
 * request m of the step is due at the root of a s + k s^2 / 2 = m, written
 * as 2m / (a + sqrt(a^2 + 2km)) so that k = 0 and k < 0 need no case.
 */
#include "pace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
reset(pace *p)
{
	memset(p, 0, sizeof(*p));
}

static double
step_count(const pace_step *s)
{
	if (isinf(s->secs))
		return s->from > 0 ? INFINITY : 0;
	return (s->from + s->to) / 2 * s->secs;
}

/* Fills in t0 and n0 of every step. */
static void
lay_out(pace *p)
{
	double t = 0, n = 0;
	for (size_t i = 0; i < p->n_steps; i++) {
		p->steps[i].t0 = t;
		p->steps[i].n0 = n;
		t += p->steps[i].secs;
		n += step_count(&p->steps[i]);
	}
	p->cur = 0;
	p->next = 0;
}

kv_err
pace_rate(pace *p, double rate, double secs)
{
	if (!(rate > 0) || !isfinite(rate) || !(secs > 0))
		return KV_EINVAL;
	reset(p);
	p->steps[0] = (pace_step) { .from = rate, .to = rate, .secs = secs };
	p->n_steps = 1;
	lay_out(p);
	return KV_OK;
}

/*
 * Reads a finite, non-negative number followed by the character `sep`, or
 * by the end of the string when last is true.
 */
static bool
number(const char **s, char sep, bool last, double *out)
{
	char *end;
	double v = strtod(*s, &end);
	if (end == *s || !isfinite(v) || v < 0)
		return false;
	if (!(*end == sep || (last && *end == '\0')))
		return false;
	*out = v;
	*s = end;
	return true;
}

kv_err
pace_parse_schedule(pace *p, const char *spec)
{
	pace q;
	reset(&q);
	const char *s = spec;
	for (;;) {
		double rate, secs;
		if (q.n_steps == PACE_MAX_STEPS ||
		    !number(&s, ':', false, &rate))
			return KV_EINVAL;
		s++;
		if (!number(&s, ',', true, &secs) || !(secs > 0))
			return KV_EINVAL;
		q.steps[q.n_steps++] =
		    (pace_step) { .from = rate, .to = rate, .secs = secs };
		if (*s == '\0')
			break;
		s++;
	}
	lay_out(&q);
	*p = q;
	return KV_OK;
}

kv_err
pace_parse_ramp(pace *p, const char *spec)
{
	const char *s = spec;
	double from, to, secs;
	if (!number(&s, ':', false, &from))
		return KV_EINVAL;
	s++;
	if (!number(&s, ':', false, &to))
		return KV_EINVAL;
	s++;
	if (!number(&s, '\0', true, &secs) || !(secs > 0))
		return KV_EINVAL;
	reset(p);
	p->steps[0] = (pace_step) { .from = from, .to = to, .secs = secs };
	p->n_steps = 1;
	lay_out(p);
	return KV_OK;
}

double
pace_length(const pace *p)
{
	double t = 0;
	for (size_t i = 0; i < p->n_steps; i++)
		t += p->steps[i].secs;
	return t;
}

double
pace_step_count(const pace *p, size_t i)
{
	return i < p->n_steps ? step_count(&p->steps[i]) : 0;
}

/* Seconds into step s at which request m of it (m >= 0) is due. */
static double
due_in_step(const pace_step *s, double m)
{
	if (m <= 0)
		return 0;
	double a = s->from;
	double k = isinf(s->secs) ? 0 : (s->to - s->from) / s->secs;
	double disc = a * a + 2 * k * m;
	if (disc < 0)
		disc = 0; /* rounding at the very end of a falling ramp */
	double t = 2 * m / (a + sqrt(disc));
	return t < s->secs ? t : s->secs;
}

/* The step request n falls in at or after step `from`, or n_steps. */
static size_t
find_step(const pace *p, size_t from, uint64_t n)
{
	size_t i = from;
	while (i < p->n_steps &&
	    (double) n >= p->steps[i].n0 + step_count(&p->steps[i]))
		i++;
	return i;
}

double
pace_due_at(const pace *p, uint64_t n)
{
	size_t i = find_step(p, 0, n);
	if (i == p->n_steps)
		return INFINITY;
	const pace_step *s = &p->steps[i];
	return s->t0 + due_in_step(s, (double) n - s->n0);
}

bool
pace_peek(pace *p, int64_t *due_ns)
{
	p->cur = find_step(p, p->cur, p->next);
	if (p->cur == p->n_steps)
		return false;
	const pace_step *s = &p->steps[p->cur];
	double t = s->t0 + due_in_step(s, (double) p->next - s->n0);
	*due_ns = llround(t * 1e9);
	return true;
}

void
pace_take(pace *p)
{
	p->next++;
}

size_t
pace_step_at(const pace *p, double t)
{
	if (p->n_steps == 0)
		return 0;
	for (size_t i = 0; i < p->n_steps; i++)
		if (t < p->steps[i].t0 + p->steps[i].secs)
			return i;
	return p->n_steps - 1;
}

double
pace_rate_at(const pace *p, double t)
{
	if (p->n_steps == 0 || t < 0 || t >= pace_length(p))
		return 0;
	const pace_step *s = &p->steps[pace_step_at(p, t)];
	if (isinf(s->secs))
		return s->from;
	return s->from + (s->to - s->from) * (t - s->t0) / s->secs;
}
