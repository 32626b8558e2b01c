/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure-coding front end: argument validation, recoverability decision and
 * dispatch to a backend (sdr_ec_isal.c, sdr_ec_xor.c or a hardware engine).
 */
#include "sdr_ec.h"
#include "sdr_ec_gfni.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sdr_ec {
	const struct sdr_ec_ops *ops;
	void *priv;
	unsigned int k;
	unsigned int m;
};

const struct sdr_ec_ops *sdr_ec_default_ops(enum sdr_ec_code code)
{
	switch (code) {
	case SDR_EC_RS: return sdr_ec_gfni_usable() ? &sdr_ec_gfni_rs_ops : &sdr_ec_isal_rs_ops;
	case SDR_EC_XOR: return &sdr_ec_xor_ops;
	}
	return NULL;
}

int sdr_ec_check_params(enum sdr_ec_code code, unsigned int k, unsigned int m)
{
	if (k < 1 || m < 1 || k > SDR_EC_MAX_CHUNKS || m > SDR_EC_MAX_CHUNKS ||
	    k + m > SDR_EC_MAX_CHUNKS)
		return -EINVAL;
	switch (code) {
	case SDR_EC_RS: return 0;
	case SDR_EC_XOR:
		/* m > k would leave parity groups without data. */
		return m <= k ? 0 : -EINVAL;
	}
	return -EINVAL;
}

struct sdr_ec *sdr_ec_create_with(const struct sdr_ec_ops *ops, unsigned int k, unsigned int m)
{
	struct sdr_ec *ec;
	int rc;

	if (ops == NULL || ops->init == NULL || ops->fini == NULL || ops->encode == NULL ||
	    ops->decode == NULL || ops->max_len == 0 || sdr_ec_check_params(ops->code, k, m) != 0) {
		errno = EINVAL;
		return NULL;
	}
	ec = calloc(1, sizeof(*ec));
	if (ec == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ec->ops = ops;
	ec->k = k;
	ec->m = m;
	rc = ops->init(&ec->priv, k, m);
	if (rc != 0) {
		free(ec);
		errno = rc < 0 ? -rc : EINVAL;
		return NULL;
	}
	return ec;
}

struct sdr_ec *sdr_ec_create(enum sdr_ec_code code, unsigned int k, unsigned int m)
{
	const struct sdr_ec_ops *ops = sdr_ec_default_ops(code);

	if (ops == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return sdr_ec_create_with(ops, k, m);
}

void sdr_ec_free(struct sdr_ec *ec)
{
	if (ec == NULL)
		return;
	ec->ops->fini(ec->priv);
	free(ec);
}

unsigned int sdr_ec_k(const struct sdr_ec *ec)
{
	return ec->k;
}

unsigned int sdr_ec_m(const struct sdr_ec *ec)
{
	return ec->m;
}

enum sdr_ec_code sdr_ec_code_of(const struct sdr_ec *ec)
{
	return ec->ops->code;
}

const char *sdr_ec_backend_name(const struct sdr_ec *ec)
{
	return ec->ops->name;
}

int sdr_ec_encode(const struct sdr_ec *ec, const uint8_t *const *data, uint8_t *const *parity,
		  size_t len)
{
	unsigned int i;

	if (ec == NULL || data == NULL || parity == NULL || len == 0 || len > ec->ops->max_len)
		return -EINVAL;
	for (i = 0; i < ec->k; i++)
		if (data[i] == NULL)
			return -EINVAL;
	for (i = 0; i < ec->m; i++)
		if (parity[i] == NULL)
			return -EINVAL;
	return ec->ops->encode(ec->priv, data, parity, len);
}

int sdr_ec_encode_update(const struct sdr_ec *ec, unsigned int i, const uint8_t *data,
			 uint8_t *const *parity, size_t len)
{
	unsigned int j;

	if (ec == NULL || data == NULL || parity == NULL || len == 0 || len > ec->ops->max_len ||
	    i >= ec->k)
		return -EINVAL;
	if (ec->ops->encode_update == NULL)
		return -ENOTSUP;
	for (j = 0; j < ec->m; j++)
		if (parity[j] == NULL)
			return -EINVAL;
	return ec->ops->encode_update(ec->priv, i, data, parity, len);
}

int sdr_ec_has_update(const struct sdr_ec *ec)
{
	return ec != NULL && ec->ops->encode_update != NULL;
}

/* Number of missing data chunks, or -EIO. Decided here, not in the backends,
 * so that every backend of a code refuses exactly the same patterns. */
static int ec_missing_data(const struct sdr_ec *ec, const uint8_t *present)
{
	unsigned int k = ec->k, m = ec->m, i, g;
	unsigned int lost_data = 0, lost_total = 0;

	for (i = 0; i < k + m; i++)
		if (!present[i]) {
			lost_total++;
			lost_data += i < k;
		}
	if (lost_data == 0)
		return 0;

	switch (ec->ops->code) {
	case SDR_EC_RS:
		/* MDS: any k chunks determine the data. */
		return lost_total <= m ? (int)lost_data : -SDR_EC_ENOTRECOVERABLE;
	case SDR_EC_XOR:
		for (g = 0; g < m; g++) {
			unsigned int lost = !present[k + g];
			unsigned int group_lost_data = 0;

			for (i = g; i < k; i += m)
				group_lost_data += !present[i];
			lost += group_lost_data;
			if (group_lost_data > 0 && lost > 1)
				return -SDR_EC_ENOTRECOVERABLE;
		}
		return (int)lost_data;
	}
	return -EINVAL;
}

int sdr_ec_can_decode(const struct sdr_ec *ec, const uint8_t *present)
{
	if (ec == NULL || present == NULL)
		return -EINVAL;
	return ec_missing_data(ec, present);
}

int sdr_ec_decode(struct sdr_ec *ec, uint8_t *const *chunks, const uint8_t *present, size_t len)
{
	unsigned int i;
	int missing, rc;

	if (ec == NULL || chunks == NULL || present == NULL || len == 0 || len > ec->ops->max_len)
		return -EINVAL;
	for (i = 0; i < ec->k + ec->m; i++)
		if (chunks[i] == NULL && (present[i] || i < ec->k))
			return -EINVAL;
	missing = ec_missing_data(ec, present);
	if (missing <= 0)
		return missing;
	rc = ec->ops->decode(ec->priv, chunks, present, len);
	return rc < 0 ? rc : missing;
}
