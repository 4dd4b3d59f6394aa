/*
 * tally.h - members in named groups: how many each group holds, which
 * group holds the most, and each group's members oldest first.
 *
 * Members are the owner's small integers 0..max_members-1 (slots of its own
 * table); a group is named by TALLY_KEY_LEN bytes and lives while it has
 * members.  Joining, leaving, finding the heaviest group and a group's
 * oldest member are O(1): a group's members form a list in the order they
 * joined, and the groups sit in one ring per size, in the order they
 * reached it, with the largest size in use kept up to date (sizes change
 * by one at a time).  Fixed capacity,
 * allocated at init.  Pure: no I/O, no clock, no locking (the owner's).
 */
#ifndef KNOCKGW_TALLY_H
#define KNOCKGW_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "common/table/hidx.h"

enum {
	TALLY_KEY_LEN = 33,
	TALLY_NONE = HIDX_NONE,
};

struct tally_group {
	uint8_t key[TALLY_KEY_LEN];
	uint32_t hash;
	uint32_t size;
	uint32_t oldest, newest;	/* members, in joining order */
	uint32_t sprev, snext;		/* the ring of groups of this size; free list */
};

struct tally {
	size_t max_members, max_groups, ngroups;
	struct hidx idx;		/* key -> group */
	struct tally_group *g;
	uint32_t free_group;
	uint32_t *group_of;		/* per member: its group, or TALLY_NONE */
	uint32_t *prev, *next;		/* per member: older and newer in its group */
	uint32_t *by_size;		/* per size 1..max_members: its ring's first group */
	uint32_t top;			/* the largest size in use; 0 when empty */
};

/* 0, -EINVAL or -ENOMEM. */
int tally_init(struct tally *t, size_t max_members, size_t max_groups);
void tally_free(struct tally *t);

/*
 * Member m, in no group, joins the group named key (made if new): 0, or
 * -ENOSPC when max_groups groups exist already (m stays in none), -EINVAL
 * for a member out of range or already in a group.
 */
int tally_join(struct tally *t, const uint8_t key[static TALLY_KEY_LEN], uint32_t m);

/* m leaves its group (a group left empty goes); nothing if m is in none. */
void tally_leave(struct tally *t, uint32_t m);

/* The size of m's group; 0 if m is in none. */
uint32_t tally_size_of(const struct tally *t, uint32_t m);

/* The name of m's group; NULL if m is in none. */
const uint8_t *tally_key_of(const struct tally *t, uint32_t m);

/* The size of the group named key; 0 if there is none. */
uint32_t tally_size(const struct tally *t, const uint8_t key[static TALLY_KEY_LEN]);

/*
 * The oldest member of a largest group, TALLY_NONE when there are no
 * groups; its group's size in *ret_size (0 then).  Of several groups of
 * the largest size, the one that reached it first.
 */
uint32_t tally_heaviest(const struct tally *t, uint32_t *ret_size);

#endif
