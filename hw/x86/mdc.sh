#!/usr/bin/env bash
# The multi-DC rig: N "datacenters" (3..6; 2 works too) joined through a
# router, on one machine (root):
#
#   netns DC k (k = 0..N-1): veth MVD (MTU 9000), kernel KIP = 10.100.k.1/24
#     (the TCP bootstrap of sdr-pipe), default route via the router; sdr-dpu
#     on net_af_packet over the same veth, DPU address DIP = 10.100.k.2, MAC
#     DMAC = 02:53:44:52:64:0k, static next hop (--peer-mac) = the router's
#     MAC on that link.
#   netns router: one veth per DC (MVR, 10.100.k.254/24, MAC
#     02:53:44:52:fe:0k), Linux IP forwarding, a permanent neighbour entry
#     for every DPU address (the DPUs answer ARP too).
#
# The DPUs' frames cross the router unchanged but for the TTL and the IP
# checksum (both masked by the RoCE ICRC), so each DPU sees its peers' own
# source addresses and its link emulator can apply one link per peer
# (--link-peer, docs/link-emulator.md). The per-peer arguments of DC k come
# from the network description (sdr-pipe --net FILE --print-link-args k,
# docs/pipeline.md) or are given by hand (--link-args K "ARGS"). Kernel TCP
# between the DCs is not emulated (it crosses the router directly).
#
# Commands:
#   mdc.sh up N [--tag TAG] [--net FILE] [--link-args K "ARGS"]... [--dpu-args "ARGS"]
#       bring up the namespaces and N daemons; prints the rig's variables
#       (NAME=VALUE lines, also written to /tmp/sdr-mdc-TAG/rig.env, which
#       `down` reads). TAG defaults to this script's PID; interface names
#       stay within 15 characters for tags of up to 12 characters.
#   mdc.sh down TAG     stop the daemons (SIGINT: they write their stats) and
#                       remove the namespaces
#   mdc.sh env TAG      print the variables of a running rig
# Sourced (tests, measure scripts): mdc_up N / mdc_down with the same
# variables (MDC_TAG, MDC_DIR, MDC_DPU_ARGS, MDC_LINK_ARGS[k], MDC_NET), and
# mdc_pipe TAG ARGS... to run sdr-pipe on every DC.
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/rig.sh"
: "${SDR_PIPE:=$SDR_BUILD/host/pipe/sdr-pipe}"

MDC_MAX=6
MDC_KIP_FMT=10.100.%d.1
MDC_DIP_FMT=10.100.%d.2
MDC_RIP_FMT=10.100.%d.254

# mdc_names TAG N: the names and addresses of the rig TAG with N DCs
mdc_names() {
	local k
	MDC_TAG=$1 MDC_N=$2
	MDC_NS_R=sdr-mr-$1
	MDC_DIR=${MDC_DIR:-/tmp/sdr-mdc-$1}
	MDC_NS=() MDC_VD=() MDC_VR=() MDC_KIP=() MDC_DIP=() MDC_DMAC=() MDC_RMAC=()
	MDC_SOCK=() MDC_LOG=() MDC_STATS=()
	for ((k = 0; k < $2; k++)); do
		MDC_NS[k]=sdr-m$k-$1
		MDC_VD[k]=m${k}d$1
		MDC_VR[k]=m${k}r$1
		MDC_KIP[k]=$(printf "$MDC_KIP_FMT" "$k")
		MDC_DIP[k]=$(printf "$MDC_DIP_FMT" "$k")
		MDC_DMAC[k]=$(printf '02:53:44:52:64:%02x' "$k")
		MDC_RMAC[k]=$(printf '02:53:44:52:fe:%02x' "$k")
		MDC_SOCK[k]=$MDC_DIR/dpu$k.sock
		MDC_LOG[k]=$MDC_DIR/dpu$k.log
		MDC_STATS[k]=$MDC_DIR/dpu$k.json
	done
}

# mdc_netns_up: the router namespace and one namespace per DC. 1 on failure
# (nothing left).
mdc_netns_up() {
	local k
	[ "$(id -u)" = 0 ] && command -v ip >/dev/null || return 1
	ip netns add "$MDC_NS_R" || return 1
	ip -n "$MDC_NS_R" link set lo up
	ip netns exec "$MDC_NS_R" sysctl -qw net.ipv4.ip_forward=1 || { mdc_netns_down; return 1; }
	ip netns exec "$MDC_NS_R" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	for ((k = 0; k < MDC_N; k++)); do
		ip netns add "${MDC_NS[k]}" || { mdc_netns_down; return 1; }
		ip -n "${MDC_NS[k]}" link set lo up
		ip netns exec "${MDC_NS[k]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip link add "${MDC_VD[k]}" netns "${MDC_NS[k]}" type veth \
			peer name "${MDC_VR[k]}" netns "$MDC_NS_R" address "${MDC_RMAC[k]}" ||
			{ mdc_netns_down; return 1; }
		ip -n "${MDC_NS[k]}" link set "${MDC_VD[k]}" mtu 9000 up &&
			ip -n "${MDC_NS[k]}" addr add "${MDC_KIP[k]}/24" dev "${MDC_VD[k]}" &&
			ip -n "${MDC_NS[k]}" route add default via "$(printf "$MDC_RIP_FMT" "$k")" &&
			ip -n "$MDC_NS_R" link set "${MDC_VR[k]}" mtu 9000 up &&
			ip -n "$MDC_NS_R" addr add "$(printf "$MDC_RIP_FMT" "$k")/24" dev "${MDC_VR[k]}" &&
			ip -n "$MDC_NS_R" neigh replace "${MDC_DIP[k]}" lladdr "${MDC_DMAC[k]}" \
				dev "${MDC_VR[k]}" nud permanent ||
			{ mdc_netns_down; return 1; }
	done
	return 0
}

mdc_netns_down() {
	local k
	for ((k = 0; k < MDC_N; k++)); do ip netns del "${MDC_NS[k]}" 2>/dev/null; done
	ip netns del "$MDC_NS_R" 2>/dev/null
	return 0
}

# mdc_link_args K: the per-peer link arguments of DC K's daemon: MDC_LINK_ARGS[K]
# if set, else one --link-peer per link into K of the network description
# MDC_NET (sdr-pipe --print-link-args, with the DPUs' addresses)
mdc_link_args() {
	local addrs out l
	if [ -n "${MDC_LINK_ARGS[$1]:-}" ]; then
		echo "${MDC_LINK_ARGS[$1]}"
	elif [ -n "${MDC_NET:-}" ]; then
		addrs=$(IFS=,; echo "${MDC_DIP[*]}")
		out=$("$SDR_PIPE" --quiet --net "$MDC_NET" --print-link-args "$1" --dc-addrs "$addrs") ||
			return 1
		for l in $out; do printf -- '--link-peer %s ' "$l"; done
	fi
}

# mdc_dpus_up: one sdr-dpu per DC (mdc_netns_up first), each with
# MDC_DPU_ARGS and its link arguments; --stats-json MDC_STATS[k]. Sets
# MDC_PID[k] and MDC_PREFIX[k] (EAL file prefix, for dpdk-telemetry.py -f); 1
# when one did not come up (the others keep running: mdc_down).
mdc_dpus_up() {
	local k largs
	MDC_PID=() MDC_PREFIX=()
	for ((k = 0; k < MDC_N; k++)); do
		largs=$(mdc_link_args "$k") || { echo "mdc: no link arguments for DC $k" >&2; return 1; }
		# shellcheck disable=SC2086
		rig_dpu "${MDC_NS[k]}" "${MDC_VD[k]}" "${MDC_SOCK[k]}" "${MDC_LOG[k]}" "${MDC_DIP[k]}" \
			"${MDC_DMAC[k]}" "${MDC_RMAC[k]}" --stats-json "${MDC_STATS[k]}" \
			${MDC_DPU_ARGS:-} $largs || return 1
		MDC_PID[k]=$RIG_PID
		MDC_PREFIX[k]=$RIG_PREFIX
	done
}

# mdc_pipe TAG ARGS...: sdr-pipe ARGS on every DC of the rig, one process per
# DC in its namespace (--dc K, --dpu, DC 0's --server/--port and the others'
# --connect added; MDC_PIPE_EXTRA[K]: more arguments for DC K alone), DC 0
# last in the foreground. Output in MDC_DIR/TAG-K.log. 0 when every process
# exits 0; else 1 with their output on stderr.
mdc_pipe() {
	local tag=$1 port=$((20000 + RANDOM % 20000)) k rc=0 pids=()
	shift
	for ((k = 1; k < MDC_N; k++)); do
		# shellcheck disable=SC2086
		ip netns exec "${MDC_NS[k]}" "$SDR_PIPE" "$@" ${MDC_PIPE_EXTRA[k]:-} --dc "$k" \
			--dpu "${MDC_SOCK[k]}" --connect "${MDC_KIP[0]}:$port" >"$MDC_DIR/$tag-$k.log" 2>&1 &
		pids+=($!)
	done
	# shellcheck disable=SC2086
	ip netns exec "${MDC_NS[0]}" "$SDR_PIPE" "$@" ${MDC_PIPE_EXTRA[0]:-} --dc 0 \
		--dpu "${MDC_SOCK[0]}" --server "${MDC_KIP[0]}" --port "$port" >"$MDC_DIR/$tag-0.log" 2>&1 ||
		rc=1
	for k in "${pids[@]}"; do wait "$k" || rc=1; done
	[ $rc = 0 ] || cat "$MDC_DIR/$tag"-*.log >&2
	return $rc
}

# mdc_env: the rig's variables, NAME=VALUE (K = 0..N-1 for per-DC ones)
mdc_env() {
	local k
	echo "MDC_TAG=$MDC_TAG"
	echo "MDC_N=$MDC_N"
	echo "MDC_DIR=$MDC_DIR"
	echo "MDC_NS_R=$MDC_NS_R"
	for ((k = 0; k < MDC_N; k++)); do
		echo "MDC_NS_$k=${MDC_NS[k]}"
		echo "MDC_KIP_$k=${MDC_KIP[k]}"
		echo "MDC_DIP_$k=${MDC_DIP[k]}"
		echo "MDC_SOCK_$k=${MDC_SOCK[k]}"
		echo "MDC_LOG_$k=${MDC_LOG[k]}"
		echo "MDC_STATS_$k=${MDC_STATS[k]}"
		echo "MDC_PID_$k=${MDC_PID[k]:-}"
		echo "MDC_PREFIX_$k=${MDC_PREFIX[k]:-}"
	done
}

# mdc_up N: namespaces and daemons of MDC_TAG (default: this shell's PID,
# SDR_NS_TAG); 1 on failure, with everything removed again
mdc_up() {
	local n=$1
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ] || [ "$n" -gt $MDC_MAX ]; then
		echo "mdc: 2..$MDC_MAX DCs, not '$n'" >&2
		return 1
	fi
	mdc_names "${MDC_TAG:-$SDR_NS_TAG}" "$n"
	mkdir -p "$MDC_DIR" || return 1
	mdc_netns_up || { echo "mdc: cannot create the namespaces (root? ip?)" >&2; return 1; }
	mdc_dpus_up || { mdc_down; return 1; }
	mdc_env >"$MDC_DIR/rig.env"
}

# mdc_down: stop the daemons (SIGINT), remove the namespaces (the state
# directory stays: logs and stats; remove MDC_DIR when done)
mdc_down() {
	local k rc=0
	for ((k = 0; k < MDC_N; k++)); do
		[ -n "${MDC_PID[k]:-}" ] && { rig_stop "${MDC_PID[k]}" || rc=1; }
	done
	mdc_netns_down
	return $rc
}

# ---- command mode ----
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	usage() { sed -n '2,/^# shellcheck/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
	cmd=${1:-}
	[ $# -gt 0 ] && shift
	case $cmd in
	up)
		[ $# -ge 1 ] || { usage >&2; exit 2; }
		n=$1
		shift
		MDC_LINK_ARGS=()
		while [ $# -gt 0 ]; do
			case $1 in
			--tag) MDC_TAG=$2; shift 2 ;;
			--net) MDC_NET=$2; shift 2 ;;
			--link-args) MDC_LINK_ARGS[$2]=$3; shift 3 ;;
			--dpu-args) MDC_DPU_ARGS=$2; shift 2 ;;
			*) echo "mdc.sh up: unknown option '$1'" >&2; exit 2 ;;
			esac
		done
		[ -z "${MDC_NET:-}" ] || [ -r "$MDC_NET" ] || { echo "mdc.sh: cannot read $MDC_NET" >&2; exit 2; }
		MDC_TAG=${MDC_TAG:-$$}
		mdc_up "$n" || exit 1
		# the daemons outlive this script: `mdc.sh down TAG` stops them
		disown -a
		cat "$MDC_DIR/rig.env"
		;;
	down | env)
		[ $# -eq 1 ] || { usage >&2; exit 2; }
		f=/tmp/sdr-mdc-$1/rig.env
		[ -r "$f" ] || { echo "mdc.sh: no rig '$1' ($f)" >&2; exit 1; }
		if [ "$cmd" = env ]; then cat "$f"; exit 0; fi
		# shellcheck disable=SC1090
		. "$f"
		mdc_names "$MDC_TAG" "$MDC_N"
		for ((k = 0; k < MDC_N; k++)); do v=MDC_PID_$k; MDC_PID[k]=${!v}; done
		mdc_down
		rc=$?
		rm -f "$f"
		exit $rc
		;;
	-h | --help) usage ;;
	*) usage >&2; exit 2 ;;
	esac
fi
