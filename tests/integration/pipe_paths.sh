#!/usr/bin/env bash
# sdr-pipe over a link of two paths (hw/x86/mdc.sh: two DC namespaces through
# a router namespace, one sdr-dpu each, per-peer links from one network
# description): both directions 5 ms | 12.5 ms at 250 Mbit/s each (ECMP by
# the UDP source port). The description's spec reaches each receiving
# daemon as one --link-peer of two paths (sdr-pipe --print-link-args). Runs
# 4 stages placed 0,0,1,1 with --rel sr, first --paths 4, then --paths 16.
# Checks:
#  - both processes exit 0 each time (every payload's header and checksum
#    verified by its receiving stage), and the merged log passes the offline
#    dependency check;
#  - each daemon has the link's two paths as lanes (NAME/p0, NAME/p1, with
#    their delays) and every frame it took is accounted for on them;
#  - after the --paths 16 run both paths of both directions carried frames
#    (16 ports of a QP never all hash onto one of 2 paths; 4 ports do for
#    about 1 QPN in 6, so the --paths 4 run checks payloads only);
#  - the DES's prediction of the 2-path link lies between that of one
#    250 Mbit/s path and of an ideal 500 Mbit/s link (sdr-pipe --simulate).
# Timing of the runs is not checked. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/mdc.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root (network namespaces)"
[ -x "$SDR_PIPE" ] || sdr_skip "no $SDR_PIPE"

MDC_TAG=pp$$
MDC_DIR=$SDR_TMP/rig
MDC_NET=$SDR_TMP/paths.net
MDC_DPU_ARGS="--port-rate 900m --stats-interval 0"
cat >"$MDC_NET" <<'NET'
# two paths each way, ECMP by the UDP source port
link f to=1 from=0 delay=5ms rate=250mbit buffer=4MB | delay=12.5ms rate=250mbit buffer=4MB
link r to=0 from=1 delay=5ms rate=250mbit buffer=4MB | delay=12.5ms rate=250mbit buffer=4MB
NET
ARGS="--place 0,0,1,1 --micro 4 --tf 2ms --tb 4ms --act 2M --grad 2M --rel sr --timeout 20"
COMMON="$ARGS --net $MDC_NET"

# the prediction: between one 250 Mbit/s path and an ideal 500 Mbit/s link
pred() { # NET-TEXT PATHS
	# shellcheck disable=SC2086
	"$SDR_PIPE" $ARGS --net-text "$1" --paths "$2" --simulate --json |
		sed -n 's/.*"pred_iter_ms":\([0-9.]*\).*/\1/p'
}
t2=$(pred "$(grep '^link' "$MDC_NET" | tr '\n' ';')" 4)
t1=$(pred "link f to=1 from=0 delay=5ms rate=250mbit; link r to=0 from=1 delay=5ms rate=250mbit" 4)
ti=$(pred "link f to=1 from=0 delay=5ms rate=500mbit; link r to=0 from=1 delay=5ms rate=500mbit" 4)
sdr_log "predicted iteration: 2 paths $t2 ms, one 250 Mbit/s path $t1 ms, ideal 500 Mbit/s $ti ms"
awk -v a="$ti" -v b="$t2" -v c="$t1" 'BEGIN { exit !(a + 0 < b + 0 && b + 0 < c + 0) }' ||
	sdr_fail "the 2-path prediction $t2 ms is not between $ti and $t1 ms"

SDR_CLEANUPS+=("mdc_down")
mdc_up 2 || sdr_fail "the rig did not come up"
for k in 0 1; do
	sdr_log "DC $k's link arguments: $(mdc_link_args "$k")"
done

# pipe2 TAG [sdr-pipe args]: both processes, the merged log checked offline
pipe2() {
	local tag=$1
	shift
	MDC_PIPE_EXTRA[0]="--json --events $SDR_TMP/$tag.ev"
	# shellcheck disable=SC2086
	mdc_pipe "$tag" $COMMON "$@" || return 1
	grep -E '^\{' "$MDC_DIR/$tag-0.log" | head -c 400
	echo
	# shellcheck disable=SC2086
	"$SDR_PIPE" $COMMON "$@" --check-events "$SDR_TMP/$tag.ev" || return 1
}

sdr_log "run 1: --paths 4, 1f1b, 3 iterations"
pipe2 p4 --sched 1f1b --paths 4 --iters 3 || sdr_fail "the --paths 4 run failed"
sdr_log "run 2: --paths 16, greedy, 3 iterations"
pipe2 p16 --sched greedy --paths 16 --iters 3 || sdr_fail "the --paths 16 run failed"

mdc_down || sdr_fail "a daemon did not stop cleanly"

/usr/bin/python3 - "${MDC_STATS[@]}" <<'PY' || sdr_fail "lane checks"
import json, sys
name = {0: "r", 1: "f"}            # the link into each DC
for k, f in enumerate(sys.argv[1:]):
    inst = json.load(open(f))["instances"][0]
    lanes = {l["lane"].split(":")[0]: l for l in inst["link"]["lanes"]}
    p0, p1 = lanes[name[k] + "/p0"], lanes[name[k] + "/p1"]
    assert "delay=5ms" in p0["lane"] and "delay=12.5ms" in p1["lane"], (p0["lane"], p1["lane"])
    for l in lanes.values():
        assert l["pkts_in"] == l["delivered"] + l["dropped_buffer"] + l["dropped_loss"] + \
            l["dropped_ge"] + l["dropped_limit"], l
    print("DC %d: lane %s %d frames, %s %d frames" %
          (k, name[k] + "/p0", p0["pkts_in"], name[k] + "/p1", p1["pkts_in"]))
    assert p0["pkts_in"] > 0 and p1["pkts_in"] > 0, "a path carried nothing"
PY
echo "pipe_paths: 2 DCs over a 2-path link each way, sdr-pipe --paths 4 and 16 with SR; payloads verified, dependencies ok, both paths carried frames, prediction between 250 Mbit/s and 500 Mbit/s"
