/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Populate the page tables of registered memory off the control thread.
 *
 * MR_REG maps the host's memfd without MAP_POPULATE: populating a large MR
 * on the main lcore would block every other host (seconds for GiBs) and make
 * the daemon allocate every page of memory the host never touched. Instead,
 * this thread maps in the background the pages the host already has
 * (mincore(): resident in the memfd), so that the fast path does not take a
 * minor fault per page on first use, and allocates nothing: pages the host
 * never touched are faulted in by the worker when a packet lands there
 * (shmem cannot fail such a fault with SIGBUS; hugetlbfs could, and is
 * refused by MR_REG).
 *
 * A job is keyed by its MR; sdr_mrpop_cancel() returns only when the thread
 * no longer touches the mapping, so the caller may munmap it afterwards.
 * Layer ctl/: the control plane (main lcore); it calls the layers below, nothing calls it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mrpop.h"
#include "sdr_ctx.h"
#include "sdr_dpu.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Work between two looks at the cancel flag, and the longest time the
 * mmap lock is held for reading (the control thread waits that long to
 * map a segment): 2 MiB, ~1.5 ms; 3 GiB are mapped in ~1.3 s. */
#define POP_CHUNK (2u << 20)

struct pop_job {
	const void *key;
	uint8_t *addr;
	size_t len;
	struct pop_job *next;
};

static pthread_mutex_t pop_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pop_cv = PTHREAD_COND_INITIALIZER;   /* work queued / stop */
static pthread_cond_t pop_done = PTHREAD_COND_INITIALIZER; /* current job finished */
static struct pop_job *pop_head, **pop_tail = &pop_head;
static const void *pop_cur;    /* key of the job being run */
static _Atomic int pop_cancel; /* stop the current job */
static int pop_stop, pop_running;
static int pop_unsupported; /* kernel without MADV_POPULATE_WRITE */
static pthread_t pop_thr;

/* Map the resident pages of [addr, addr + len) (page aligned). */
static void pop_chunk(uint8_t *addr, size_t len, long pg, unsigned char *vec)
{
	size_t np = len / (size_t)pg, i = 0;

	if (mincore(addr, len, vec))
		return;
	while (i < np) {
		size_t j;
		if (!(vec[i] & 1)) {
			i++;
			continue;
		}
		for (j = i; j < np && (vec[j] & 1); j++)
			;
		if (madvise(addr + i * (size_t)pg, (j - i) * (size_t)pg, MADV_POPULATE_WRITE) &&
		    errno == EINVAL)
			pop_unsupported = 1;
		i = j;
	}
}

static void *pop_main(void *arg)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(POP_CHUNK / (size_t)pg);

	(void)arg;
	pthread_mutex_lock(&pop_mu);
	while (!pop_stop) {
		struct pop_job *j = pop_head;
		if (!j) {
			pthread_cond_wait(&pop_cv, &pop_mu);
			continue;
		}
		pop_head = j->next;
		if (!pop_head)
			pop_tail = &pop_head;
		pop_cur = j->key;
		atomic_store(&pop_cancel, 0);
		pthread_mutex_unlock(&pop_mu);
		for (size_t off = 0;
		     vec && !pop_unsupported && off < j->len && !atomic_load(&pop_cancel);
		     off += POP_CHUNK)
			pop_chunk(j->addr + off,
				  j->len - off < POP_CHUNK ? j->len - off : POP_CHUNK, pg, vec);
		free(j);
		pthread_mutex_lock(&pop_mu);
		pop_cur = NULL;
		pthread_cond_broadcast(&pop_done);
	}
	pthread_mutex_unlock(&pop_mu);
	free(vec);
	return NULL;
}

int sdr_mrpop_init(void)
{
	if (pop_running)
		return 0;
	if (pthread_create(&pop_thr, NULL, pop_main, NULL))
		return -1;
	pthread_setname_np(pop_thr, "sdr-mrpop");
	pop_running = 1;
	return 0;
}

void sdr_mrpop_add(const void *key, void *addr, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct pop_job *j;

	if (!pop_running || pop_unsupported)
		return; /* the worker faults the pages in as packets land */
	j = calloc(1, sizeof(*j));
	if (!j)
		return;
	j->key = key;
	j->addr = (uint8_t *)((uintptr_t)addr & ~(uintptr_t)(pg - 1));
	j->len = ((uintptr_t)addr + len - (uintptr_t)j->addr + (size_t)pg - 1) & ~(size_t)(pg - 1);
	pthread_mutex_lock(&pop_mu);
	*pop_tail = j;
	pop_tail = &j->next;
	pthread_cond_signal(&pop_cv);
	pthread_mutex_unlock(&pop_mu);
}

void sdr_mrpop_cancel(const void *key)
{
	pthread_mutex_lock(&pop_mu);
	for (struct pop_job **pp = &pop_head; *pp;) {
		struct pop_job *j = *pp;
		if (j->key == key) {
			*pp = j->next;
			free(j);
		} else {
			pp = &j->next;
		}
	}
	pop_tail = &pop_head;
	while (*pop_tail)
		pop_tail = &(*pop_tail)->next;
	while (pop_cur == key) {
		atomic_store(&pop_cancel, 1);
		pthread_cond_wait(&pop_done, &pop_mu);
	}
	pthread_mutex_unlock(&pop_mu);
}

void sdr_mrpop_fini(void)
{
	if (!pop_running)
		return;
	pthread_mutex_lock(&pop_mu);
	pop_stop = 1;
	atomic_store(&pop_cancel, 1);
	pthread_cond_signal(&pop_cv);
	pthread_mutex_unlock(&pop_mu);
	pthread_join(pop_thr, NULL);
	pop_running = 0;
	while (pop_head) {
		struct pop_job *j = pop_head;
		pop_head = j->next;
		free(j);
	}
	pop_tail = &pop_head;
}
