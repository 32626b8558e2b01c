#!/usr/bin/env bash
# The README's "Using it" commands, run as written on the rig (root): the
# rig's namespaces and veth, both DPUs, the transfer (every message whole),
# the same with --rel sr added to sdr-send, sdr-top and sdr-diag on the
# metrics port, and the rig's removal. Only names that must be unique on a
# shared machine are changed (the rig's tag "demo", /run/ for the sockets,
# the EAL file prefixes), and the binaries come from this build. So the
# README cannot drift from the tools.
. "$(dirname "$0")/lib.sh"
[ "${SDR_HAVE_METRICS:-1}" = 1 ] || sdr_skip "sdr-dpu built without --metrics (Debian package libmicrohttpd-dev)"
[ "$(id -u)" = 0 ] || sdr_skip "needs root for ip netns"
command -v ip >/dev/null || sdr_skip "no ip command (Debian package iproute2)"
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
TAG=rt$$
# block NAME: the shell block after the README's "<!-- readme-test: NAME -->"
block() {
	awk -v m="<!-- readme-test: $1 -->" '$0 == m {f = 1; next}
		f && /^```sh/ {g = 1; next} g && /^```/ {exit} g' README.md |
		sed -e "s/sdr-a-demo/sdr-a-$TAG/g; s/sdr-b-demo/sdr-b-$TAG/g" \
		    -e "s/\bsademo\b/sa$TAG/g; s/\bsbdemo\b/sb$TAG/g; s/veth-up demo/veth-up $TAG/g" \
		    -e "s|/run/|$SDR_TMP/|g; s/--file-prefix=dpu-/--file-prefix=$TAG-/g"
}
DAEMONS=$(block daemons) TRANSFER=$(block transfer)
[ -n "$DAEMONS" ] && [ -n "$TRANSFER" ] || sdr_fail "README: no readme-test blocks"
echo "$DAEMONS"; echo "$TRANSFER"
export PATH=$SDR_BUILD/firmware:$SDR_BUILD/host/tools:$PATH
SDR_CLEANUPS+=("hw/x86/rig.sh veth-down $TAG")
eval "$DAEMONS" >"$SDR_TMP/daemons.log" 2>&1
jobs -p >"$SDR_TMP/dpids" # (not in a command substitution: its subshell has no jobs)
DPIDS=$(echo $(cat "$SDR_TMP/dpids"))
[ "$(echo $DPIDS | wc -w)" = 2 ] || sdr_fail "the README's daemons block did not start 2 DPUs"
SDR_PIDS+=($DPIDS)
for s in a b; do
	for _ in $(seq 200); do [ -S "$SDR_TMP/sdr-$s.sock" ] && break; sleep 0.1; done
	[ -S "$SDR_TMP/sdr-$s.sock" ] || { cat "$SDR_TMP/daemons.log"; sdr_fail "DPU $s did not start"; }
done
# run TEXT LOG: the transfer block (sdr-recv in the background, sdr-send)
run() {
	eval "$1" >"$2" 2>&1
	local src=$? rrc=0 p
	jobs -p >"$SDR_TMP/pids"
	for p in $(cat "$SDR_TMP/pids"); do
		case " $DPIDS " in *" $p "*) ;; *) wait "$p" || rrc=$? ;; esac
	done
	cat "$2" | grep -v "^ *[0-9]\|^#"
	[ $src = 0 ] && [ $rrc = 0 ] || { tail -20 "$2"; sdr_fail "$3: sender $src, receiver $rrc"; }
	grep -q "^sent: 30 ok, 0 failed" "$2" && grep -q "^receiver: 30 ok, 0 failed" "$2" ||
		sdr_fail "$3: not every message arrived whole"
}
run "$TRANSFER" "$SDR_TMP/t1.log" "as written"
run "$(echo "$TRANSFER" | sed '/sdr-send/s/$/ --rel sr/')" "$SDR_TMP/t2.log" "with --rel sr"
grep "note:" "$SDR_TMP/daemons.log" && sdr_fail "a DPU printed a note on the README's own set-up"
ip netns exec "sdr-a-$TAG" sdr-top --once 9464 >"$SDR_TMP/top.txt" || sdr_fail "sdr-top 9464"
grep -q "^sdr-top .* 1 daemon(s)" "$SDR_TMP/top.txt" || { cat "$SDR_TMP/top.txt"; sdr_fail "sdr-top"; }
ip netns exec "sdr-a-$TAG" sdr-diag 9464 || sdr_fail "sdr-diag 9464: something outstanding"
for p in $DPIDS; do rig_stop "$p"; done
grep -q "######## sdr-dpu [0-9.]* " "$SDR_TMP/daemons.log" || sdr_fail "no stats block at Ctrl-C"
hw/x86/rig.sh veth-down "$TAG"
ip netns list | grep -q "sdr-a-$TAG" && sdr_fail "rig.sh veth-down left the namespace"
echo "readme: OK"
