/*
 * guard.c: the limits that keep slow clients from holding httpd.
 *
 * Offers guard_deadline(), guard_expire(), guard_evictable_at(),
 * guard_victim(), guard_evict() and guard_print() (see httpd.h).
 *
 * A slowloris client sends a head a byte at a time, a slow-POST client its
 * body, a slow reader opens its window a few bytes at a time; each holds a
 * connection slot while costing itself almost nothing. So:
 *
 *  - Deadlines, each checked against the loop's clock:
 *      idle (-t)   nothing read or written for that long: closed, as before;
 *      head (-r)   a whole head must arrive within this (the first one
 *                  counting from accept): a head under way is answered 408,
 *                  one that never began is closed;
 *      stall (-w)  a request body or an answer that has not moved
 *                  PROGRESS_BYTES (or ended) within this: a body is answered
 *                  408, an answer the client does not take is reset;
 *      linger      a closing connection gets LINGER_MS to send its FIN.
 *  - Eviction: when the connection limit is reached and a newcomer waits,
 *    the connection that has made the least progress makes room, reset so
 *    that its socket (and, in the unikernel, its pcb) is free at once: one
 *    closing already, else the one stuck longest. A head, body or answer
 *    qualifies once stuck for EVICT_AFTER_MS (a real client's head arrives
 *    in one segment, right after the handshake); a connection that has sent
 *    nothing since accept (or since its last answer) only after
 *    EVICT_SILENT_MS, since clients open connections ahead of their requests
 *    (browsers' preconnects; test 37's flood establishes 2,000 before it
 *    sends). The kernel does the same one level down for half-open
 *    connections (net/tcp_hooks.c).
 */
#define _POSIX_C_SOURCE 200809L

#include "httpd.h"

#include <stdio.h>

#define EVICT_AFTER_MS 1000
#define EVICT_SILENT_MS 10000

/* Which deadline fell. */
enum deadline_kind {
	DL_NONE,
	DL_IDLE,   /* -t */
	DL_HEAD,   /* -r */
	DL_STALL,  /* -w */
	DL_LINGER, /* LINGER_MS */
};

static void earlier(int64_t at, enum deadline_kind kind, int64_t *best, enum deadline_kind *best_kind)
{
	if (at < *best) {
		*best = at;
		*best_kind = kind;
	}
}

/* c's next deadline and its kind (ties: the one listed first). */
static int64_t next_deadline(const struct server *srv, const struct conn *c, enum deadline_kind *kind)
{
	int64_t at = INT64_MAX;

	*kind = DL_NONE;
	if (c->phase == PHASE_LINGER) {
		*kind = DL_LINGER;
		return c->linger_until;
	}
	if (srv->idle_ms)
		earlier(c->last_active + srv->idle_ms, DL_IDLE, &at, kind);
	if (srv->head_ms && c->phase == PHASE_HEAD)
		earlier(c->head_start + srv->head_ms, DL_HEAD, &at, kind);
	else if (srv->head_ms && c->phase == PHASE_WAIT && c->fresh)
		earlier(c->accepted_at + srv->head_ms, DL_HEAD, &at, kind);
	if (srv->stall_ms && (c->phase == PHASE_BODY || (c->phase == PHASE_SEND && conn_sending(c))))
		earlier(c->progress_at + srv->stall_ms, DL_STALL, &at, kind);
	return at;
}

int64_t guard_deadline(const struct server *srv, const struct conn *c)
{
	enum deadline_kind kind;

	return next_deadline(srv, c, &kind);
}

/* Connection i's deadline fell: close, answer 408 or reset it, counted. */
static void expire(struct server *srv, size_t i, enum deadline_kind kind)
{
	struct conn *c = srv->conns[i];

	switch (kind) {
	case DL_LINGER:
		conn_drop(srv, i, false);
		break;
	case DL_IDLE:
		srv->cnt.idle_closed++;
		conn_drop(srv, i, false);
		break;
	case DL_HEAD:
		srv->cnt.head_timeouts++;
		if (c->phase == PHASE_HEAD) {
			srv->cnt.head_408++;
			if (conn_fail(srv, c, 408))
				break;
		}
		conn_drop(srv, i, false);
		break;
	case DL_STALL:
		if (c->phase == PHASE_BODY) {
			srv->cnt.body_stalled++;
			if (conn_fail(srv, c, 408))
				break;
			conn_drop(srv, i, false);
		} else {
			/* What it has not taken would keep the socket for ever. */
			srv->cnt.answer_stalled++;
			conn_drop(srv, i, true);
		}
		break;
	case DL_NONE:
		break;
	}
}

void guard_expire(struct server *srv)
{
	/* Backwards: dropping slot i moves the last slot into it. */
	for (size_t i = srv->nconns; i-- > 0;) {
		enum deadline_kind kind;

		if (next_deadline(srv, srv->conns[i], &kind) <= srv->now)
			expire(srv, i, kind);
	}
}

int64_t guard_evictable_at(const struct conn *c)
{
	switch (c->phase) {
	case PHASE_LINGER:
		return INT64_MIN;
	case PHASE_HEAD:
		return c->head_start + EVICT_AFTER_MS;
	case PHASE_BODY:
		return c->progress_at + EVICT_AFTER_MS;
	case PHASE_SEND:
		return conn_sending(c) ? c->progress_at + EVICT_AFTER_MS : INT64_MAX;
	case PHASE_WAIT:
		return c->last_active + EVICT_SILENT_MS;
	}
	return INT64_MAX;
}

size_t guard_victim(const struct server *srv)
{
	size_t best = SIZE_MAX;
	int64_t best_at = INT64_MAX;

	for (size_t i = 0; i < srv->nconns; i++) {
		int64_t at = guard_evictable_at(srv->conns[i]);

		if (at <= srv->now && at < best_at) {
			best = i;
			best_at = at;
		}
	}
	return best;
}

void guard_evict(struct server *srv, size_t i)
{
	struct conn *c;

	/* The slot comes from guard_victim() this turn; a wrong one would free
	 * what is not there, so it is refused in every build. */
	if (i >= srv->nconns || guard_evictable_at(srv->conns[i]) > srv->now) {
		fprintf(stderr, "httpd: slot %zu holds no connection to evict\n", i);
		return;
	}
	c = srv->conns[i];

	switch (c->phase) {
	case PHASE_LINGER: srv->cnt.evicted_linger++; break;
	case PHASE_HEAD: srv->cnt.evicted_head++; break;
	case PHASE_BODY: srv->cnt.evicted_body++; break;
	case PHASE_SEND: srv->cnt.evicted_answer++; break;
	case PHASE_WAIT: srv->cnt.evicted_silent++; break;
	}
	conn_drop(srv, i, true);
}

void guard_print(const struct server *srv)
{
	const struct guard_counters *n = &srv->cnt;
	unsigned long evicted = n->evicted_head + n->evicted_silent + n->evicted_body +
				n->evicted_answer + n->evicted_linger;

	if (n->idle_closed)
		printf("httpd: %lu idle connections closed\n", n->idle_closed);
	printf("httpd: accepted %lu, at most %lu at once; head deadline %lu (%lu answered 408), "
	       "body stalled %lu, answer stalled %lu; evicted %lu (heads %lu, silent %lu, bodies %lu, "
	       "answers %lu, closing %lu); out of descriptors %lu\n",
	       n->accepted, n->peak, n->head_timeouts, n->head_408, n->body_stalled, n->answer_stalled,
	       evicted, n->evicted_head, n->evicted_silent, n->evicted_body, n->evicted_answer,
	       n->evicted_linger, n->no_descriptors);
}
