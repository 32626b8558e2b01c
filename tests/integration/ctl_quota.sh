#!/usr/bin/env bash
# Per-client quotas on connections, contexts, QPs and registered bytes, with
# exact refusal counts; idle connections without HELLO time out; another
# client (another uid, or with --quota-key pid another process) keeps its
# own quotas.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
Q="--quota-conns 4 --quota-ctxs 3 --quota-qps 5 --quota-mr-bytes 8M --ctl-hello-timeout-ms 1500"
# shellcheck disable=SC2086
if [ "$(id -u)" = 0 ]; then
	sdr_start_ring_pair quota $Q
	# the other client runs as uid 65534: let it reach the socket
	chmod 0711 "$SDR_TMP"
	chmod 0666 "$SOCK_A"
	sdr_ctl_run quota "$SOCK_A" uid
	rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
	sdr_ctl_expect
else
	echo "not root: the uid part (a second user) is skipped"
fi
# shellcheck disable=SC2086
sdr_start_ring_pair quota-pid $Q --quota-key pid
sdr_ctl_run quota "$SOCK_A" pid
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
grep -q "connection refused: client pid .* has 4 connections open" "$DPU_LOG" ||
	sdr_fail "the daemon did not log the connection refusal"
