#!/usr/bin/env bash
# Host memory the daemon cannot fault safely is refused: a hugetlbfs memfd
# (a punched hole would SIGBUS the daemon once the free huge pages are
# gone). Holes punched into registered plain memfds are refaulted: transfers
# into and out of them work. As root a few huge pages are reserved (and the
# reservation restored) so that the host side maps and touches them as an
# attacker would.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
nr=/proc/sys/vm/nr_hugepages
if [ "$(id -u)" = 0 ] && [ -w $nr ]; then
	old=$(cat $nr)
	SDR_CLEANUPS+=("echo $old > $nr")
	echo $((old + 4)) > $nr 2>/dev/null
	echo "huge pages: $old reserved before, $(cat $nr) now"
fi
sdr_start_ring_pair hugetlb
sdr_ctl_run hugetlb "$SOCK_A" "$SOCK_B"
kill -0 "$DPU_PID" 2>/dev/null || { cat "$DPU_LOG"; sdr_fail "the daemon died"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
grep -q "MR_REG of host pid .* refused: memfd on hugetlbfs" "$DPU_LOG" ||
	sdr_fail "the daemon did not log the refusal"
