/*
 * ctlcloser.c - the control socket's closer thread (see ctlcloser.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "ctl/ctlcloser.h"

enum { QUEUE_LEN = CTL_CLOSER_MAX + CTL_MAX_CONN };

struct ctl_closer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* work for the thread, or it finished */
	unsigned n;			/* queued, the one being closed included */
	int fd[QUEUE_LEN];
	uid_t uid[QUEUE_LEN];
	bool stop;			/* ctl_closer_stop(): drain the queue, then end */
	bool done;			/* the thread has ended */
	bool orphaned;			/* the stopper stopped waiting: it frees itself */
};

static void closer_free(struct ctl_closer *cl)
{
	pthread_cond_destroy(&cl->cond);
	pthread_mutex_destroy(&cl->lock);
	free(cl);
}

static void *closer_main(void *arg)
{
	struct ctl_closer *cl = arg;
	bool orphaned;

	pthread_mutex_lock(&cl->lock);
	for (;;) {
		while (cl->n == 0 && !cl->stop)
			pthread_cond_wait(&cl->cond, &cl->lock);
		if (cl->n == 0)
			break;
		int fd = cl->fd[0];

		pthread_mutex_unlock(&cl->lock);
		close(fd);
		pthread_mutex_lock(&cl->lock);
		cl->n--;
		memmove(cl->fd, cl->fd + 1, cl->n * sizeof(cl->fd[0]));
		memmove(cl->uid, cl->uid + 1, cl->n * sizeof(cl->uid[0]));
	}
	cl->done = true;
	orphaned = cl->orphaned;
	pthread_cond_broadcast(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
	if (orphaned)
		closer_free(cl);
	return NULL;
}

int ctl_closer_start(struct ctl_closer **ret)
{
	struct ctl_closer *cl = calloc(1, sizeof(*cl));
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	if (!cl)
		return -ENOMEM;
	pthread_mutex_init(&cl->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cl->cond, &ca);
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&cl->thread, NULL, closer_main, cl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		closer_free(cl);
		return -r;
	}
	*ret = cl;
	return 0;
}

bool ctl_closer_room(struct ctl_closer *cl, uid_t uid)
{
	unsigned same = 0;
	bool room;

	if (!cl)
		return true;
	pthread_mutex_lock(&cl->lock);
	for (unsigned i = 0; i < cl->n; i++)
		same += cl->uid[i] == uid;
	room = cl->n < CTL_CLOSER_MAX && same < CTL_CONN_PER_UID;
	pthread_mutex_unlock(&cl->lock);
	return room;
}

int ctl_closer_push(struct ctl_closer *cl, int fd, uid_t uid)
{
	int r = -ENOSPC;

	pthread_mutex_lock(&cl->lock);
	if (cl->n < QUEUE_LEN) {
		cl->fd[cl->n] = fd;
		cl->uid[cl->n] = uid;
		cl->n++;
		pthread_cond_signal(&cl->cond);
		r = 0;
	}
	pthread_mutex_unlock(&cl->lock);
	return r;
}

bool ctl_closer_stop(struct ctl_closer *cl, int wait_ms)
{
	struct timespec until;
	bool done;

	if (!cl)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&cl->lock);
	cl->stop = true;
	pthread_cond_broadcast(&cl->cond);
	while (!cl->done)
		if (pthread_cond_timedwait(&cl->cond, &cl->lock, &until) == ETIMEDOUT)
			break;
	done = cl->done;
	if (!done)
		cl->orphaned = true;
	pthread_mutex_unlock(&cl->lock);
	if (done) {
		pthread_join(cl->thread, NULL);
		closer_free(cl);
	} else {
		pthread_detach(cl->thread);
	}
	return done;
}
