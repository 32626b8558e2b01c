/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reliability schemes of this firmware (layer rel): the table, the
 * registration of a scheme from outside it, and the slots of the schemes'
 * per-QP counter groups (rel.h, sdr_qpctr.h).
 */
#include <errno.h>

#include "rel.h"

#define SDR_REL_MAX 16
#define SDR_CTR_GROUPS_MAX 16

/* The table: adding a scheme is one line here. */
static const struct sdr_rel_ops *schemes[SDR_REL_MAX] = {
	&sdr_rel_none,
	&sdr_rel_sr,
	&sdr_rel_ec,
	&sdr_rel_auto,
};
static unsigned nschemes;

/* every group of the schemes, in slot order (main lcore, at start-up) */
static struct sdr_ctr_group *groups[SDR_CTR_GROUPS_MAX];
static unsigned ngroups, nslots;

static int add_groups(const struct sdr_rel_ops *o, int check)
{
	unsigned need = 0, nnew = 0;

	if (!o->desc || !o->desc->ctrs)
		return 0;
	for (struct sdr_ctr_group *const *g = o->desc->ctrs; *g; g++)
		if (!(*g)->registered) {
			need += (*g)->n;
			nnew++;
		}
	if (check && (nslots + need > SDR_QP_XCTRS_MAX || ngroups + nnew > SDR_CTR_GROUPS_MAX))
		return -ENOSPC;
	for (struct sdr_ctr_group *const *g = o->desc->ctrs; *g; g++)
		if (!(*g)->registered) {
			(*g)->base = nslots;
			(*g)->registered = 1;
			nslots += (*g)->n;
			groups[ngroups++] = *g;
		}
	return 0;
}

/* before main(): the table's counter groups get their slots, so that the
 * engines count from the first packet on (and every program linking the
 * schemes, the test rigs included, has them) */
__attribute__((constructor)) static void rel_table_init(void)
{
	while (nschemes < SDR_REL_MAX && schemes[nschemes])
		nschemes++;
	for (unsigned i = 0; i < nschemes; i++)
		add_groups(schemes[i], 0);
	/* (the firmware's own groups fit: test_scheme_toy checks the sum) */
}

const struct sdr_rel_ops *sdr_rel_ops_of(unsigned reliability)
{
	for (unsigned i = 0; i < nschemes; i++)
		if (schemes[i]->reliability == reliability)
			return schemes[i];
	return 0;
}

const struct sdr_rel_ops *sdr_rel_scheme(unsigned i)
{
	return i < nschemes ? schemes[i] : NULL;
}

int sdr_rel_register(const struct sdr_rel_ops *ops)
{
	if (sdr_rel_ops_of(ops->reliability))
		return -EEXIST;
	if (nschemes == SDR_REL_MAX || add_groups(ops, 1))
		return -ENOSPC;
	schemes[nschemes++] = ops;
	return 0;
}

void sdr_rel_ctrs_foreach(const struct sdr_qp_stats *st, sdr_rel_ctr_fn fn, void *arg)
{
#define BASE(n) fn(arg, #n, st->n, NULL);
	SDR_QP_BASE_CTRS(BASE)
#undef BASE
	for (unsigned i = 0; i < ngroups; i++)
		for (unsigned c = 0; c < groups[i]->n; c++)
			fn(arg, groups[i]->names[c], st->x[groups[i]->base + c], groups[i]->name);
}
