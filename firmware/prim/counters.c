/* SPDX-License-Identifier: BSD-3-Clause */
/* The drop counters' names (sdr_counters.h: one X-macro list).
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code. */
#include "sdr_counters.h"

#define SDR_CTR_NAME(n, d) #n,
#define SDR_CTR_DESC(n, d) d,
const char *const sdr_ctr_names[SDR_CTR__MAX] = {SDR_RX_DROP_LIST(SDR_CTR_NAME) SDR_HOST_ERR_LIST(
	SDR_CTR_NAME) SDR_TX_ERR_LIST(SDR_CTR_NAME) SDR_CTL_ERR_LIST(SDR_CTR_NAME)};
const char *const sdr_ctr_descs[SDR_CTR__MAX] = {SDR_RX_DROP_LIST(SDR_CTR_DESC) SDR_HOST_ERR_LIST(
	SDR_CTR_DESC) SDR_TX_ERR_LIST(SDR_CTR_DESC) SDR_CTL_ERR_LIST(SDR_CTR_DESC)};
