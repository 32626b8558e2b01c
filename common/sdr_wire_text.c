/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format, text: MAC and IPv4 addresses as command lines and
 * reports write them. Pure C.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "sdr_wire_priv.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sdr_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	if (s == NULL)
		return -1;
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);

		if (hi < 0 || lo < 0)
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (*s != (i == 5 ? '\0' : ':'))
			return -1;
		s += i < 5;
	}
	memcpy(mac, m, 6);
	return 0;
}

int sdr_parse_ipv4(const char *s, uint32_t *ip)
{
	struct in_addr a;

	/* inet_pton, unlike inet_aton, accepts exactly a dotted quad. */
	if (s == NULL || inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

void sdr_format_mac(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

void sdr_format_ipv4(uint32_t ip, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFF, (ip >> 8) & 0xFF, ip & 0xFF);
}
