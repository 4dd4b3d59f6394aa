/*
 * intent.c - see intent.h.
 *
 * Two flowtables under one lock: the intents themselves, and per uid the
 * number of intents it holds (an entry exists only while that number is
 * above zero).  flow_remove() wipes a value as it removes it, which is what
 * clears the payload bytes on every way out: take, replace, expiry, free.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "datapath/client/intent.h"

enum { UID_KEY_TAG = 0xdd };	/* last key byte: never a flow_key_make() key */

struct intent {
	uint32_t uid;
	uint16_t len;
	uint8_t payload[INTEG_MAX_LEN];
};

static void intent_key(struct flow_key *k, int family, uint16_t sport, const uint8_t *dst,
		       uint16_t dport)
{
	static const uint8_t any[16];	/* the local address is not part of the key */

	flow_key_make(k, family, any, dst, sport, dport);
}

static void uid_key(struct flow_key *k, uint32_t uid)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->b, &uid, sizeof(uid));
	k->b[FLOW_KEY_LEN - 1] = UID_KEY_TAG;
}

static uint32_t uid_held(struct intent_table *it, uint32_t uid)
{
	struct flow_key k;
	struct flow_entry *e;
	uint32_t n = 0;

	uid_key(&k, uid);
	e = flow_lookup(&it->uids, &k);
	if (e)
		memcpy(&n, e->value, sizeof(n));
	return n;
}

/*
 * The uid table can hold as many uids as there are intents, and an intent
 * is only counted once it fits, so the insert cannot fail; if it ever did,
 * the quota would merely undercount, never block.
 */
static void uid_adjust(struct intent_table *it, uint32_t uid, int delta)
{
	struct flow_key k;
	struct flow_entry *e;
	uint32_t n = 0;

	uid_key(&k, uid);
	e = delta > 0 ? flow_insert(&it->uids, &k, UINT64_MAX, NULL) : flow_lookup(&it->uids, &k);
	if (!e)
		return;
	memcpy(&n, e->value, sizeof(n));
	n = delta > 0 ? n + 1 : n - (n > 0);
	if (n == 0) {
		flow_remove(&it->uids, e);
		return;
	}
	memcpy(e->value, &n, sizeof(n));
}

static void on_expire(struct flow_entry *e, void *arg)
{
	struct intent_table *it = arg;
	const struct intent *in = e->value;

	uid_adjust(it, in->uid, -1);
	it->expired++;
}

struct intent_table *intent_new(size_t max)
{
	struct intent_table *it;
	int r;

	if (max == 0)
		max = 1;
	if (max > INTENT_MAX)
		max = INTENT_MAX;
	it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	r = flow_init(&it->t, max, sizeof(struct intent));
	if (r == 0) {
		r = flow_init(&it->uids, max, sizeof(uint32_t));
		if (r < 0)
			flow_free(&it->t);
	}
	if (r == 0) {
		r = -pthread_mutex_init(&it->lock, NULL);
		if (r < 0) {
			flow_free(&it->uids);
			flow_free(&it->t);
		}
	}
	if (r < 0) {
		free(it);
		errno = -r;
		return NULL;
	}
	it->per_uid = INTENT_PER_UID;
	return it;
}

void intent_free(struct intent_table *it)
{
	if (!it)
		return;
	flow_free(&it->t);	/* wipes the payloads */
	flow_free(&it->uids);
	pthread_mutex_destroy(&it->lock);
	free(it);
}

int intent_add(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
	       uint16_t dport, uint32_t uid, const uint8_t *payload, size_t len, uint64_t now)
{
	struct flow_key k;
	struct flow_entry *e;
	struct intent *in;
	int ret = 0;

	if ((family != AF_INET && family != AF_INET6) || len == 0 || len > INTEG_MAX_LEN)
		return -EINVAL;
	intent_key(&k, family, sport, dst, dport);

	pthread_mutex_lock(&it->lock);
	e = flow_lookup(&it->t, &k);
	if (e) {
		/* The port changed hands; the old intent's socket is gone. */
		in = e->value;
		if (in->uid != uid) {
			if (uid_held(it, uid) >= it->per_uid) {
				it->refused_quota++;
				ret = -EDQUOT;
				goto out;
			}
			uid_adjust(it, in->uid, -1);
			uid_adjust(it, uid, +1);
		}
		sodium_memzero(in, sizeof(*in));
		e->expires = now + INTENT_TTL;
		it->replaced++;
	} else {
		if (uid_held(it, uid) >= it->per_uid) {
			it->refused_quota++;
			ret = -EDQUOT;
			goto out;
		}
		/* Expired intents may be what fills the table: collect first. */
		if (it->t.count >= it->t.max)
			flow_gc(&it->t, now, on_expire, it);
		e = flow_insert(&it->t, &k, now + INTENT_TTL, NULL);
		if (!e) {
			it->refused_full++;
			ret = -ENOSPC;
			goto out;
		}
		uid_adjust(it, uid, +1);
		it->added++;
	}
	in = e->value;
	in->uid = uid;
	in->len = (uint16_t)len;
	memcpy(in->payload, payload, len);
out:
	pthread_mutex_unlock(&it->lock);
	return ret;
}

/* Under the lock: forget e, wiping its payload. */
static void drop(struct intent_table *it, struct flow_entry *e)
{
	const struct intent *in = e->value;

	uid_adjust(it, in->uid, -1);
	flow_remove(&it->t, e);
}

int intent_take(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
		uint16_t dport, uint8_t *payload, size_t payload_size, size_t *ret_len,
		uint64_t now)
{
	struct flow_key k;
	struct flow_entry *e;
	const struct intent *in;
	int ret = 0;

	if (family != AF_INET && family != AF_INET6)
		return -ENOENT;
	intent_key(&k, family, sport, dst, dport);

	pthread_mutex_lock(&it->lock);
	e = flow_lookup(&it->t, &k);
	if (!e) {
		ret = -ENOENT;
		goto out;
	}
	if (e->expires <= now) {
		/* Not yet collected, but as good as gone. */
		drop(it, e);
		it->expired++;
		ret = -ENOENT;
		goto out;
	}
	in = e->value;
	if (in->len > payload_size) {
		ret = -ENOBUFS;
		goto out;
	}
	memcpy(payload, in->payload, in->len);
	*ret_len = in->len;
	drop(it, e);
	it->taken++;
out:
	pthread_mutex_unlock(&it->lock);
	return ret;
}

size_t intent_gc(struct intent_table *it, uint64_t now)
{
	size_t n;

	pthread_mutex_lock(&it->lock);
	n = flow_gc(&it->t, now, on_expire, it);
	pthread_mutex_unlock(&it->lock);
	return n;
}

size_t intent_count(struct intent_table *it)
{
	size_t n;

	pthread_mutex_lock(&it->lock);
	n = it->t.count;
	pthread_mutex_unlock(&it->lock);
	return n;
}
