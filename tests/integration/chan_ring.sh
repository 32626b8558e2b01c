#!/usr/bin/env bash
# One QP served by two DPU workers (channels, docs/architecture.md
# "Channels"), without root: two DPUs in one process over a net_ring pair
# with two workers each. (1) A daemon of one worker refuses channels 2 with
# its reason, channels 9 is EINVAL (test_chan errors). (2) On a clean link,
# the calls a W = 2 QP refuses and messages completed in posting order,
# bit-exact, with merged bitmaps (test_chan api). (3) SR, EC RS(8,2) and
# AUTO QPs of two channels (stripes of one 4 KiB chunk; SR once more with
# stripes of three) over a link with
# loss, duplication and reordering on both directions: every message
# arrives bit-exact with nothing written past it (sdr-recv --guard), both
# tools complete the messages in posting order, the channel contexts sit on
# workers 0 and 1 of both instances, and the counter identities of
# sr_ring / ec_ring / auto_ring hold over the two channels' messages
# (sr_check.py / ec_check.py --channels 2). (5) The process of both DPUs
# killed (-9) mid-transfer of an SR QP of two channels and started again:
# both contexts of each tool re-attach on the same workers, their QPs are
# restored with their stripe maps, every message arrives once, bit-exact.
#   env: SDR_CHAN_LINK SDR_SIZES SDR_COUNT
. "$(dirname "$0")/lib.sh"
: "${SDR_TEST_CHAN:=$SDR_BUILD/tests/integration/test_chan}"
here=$(cd "$(dirname "$0")" && pwd)
link=${SDR_CHAN_LINK:-delay=2ms,loss=1e-2,dup=1%,reorder=1%:1ms}
sizes=${SDR_SIZES:-5000,12289,64K,1M,4M}
count=${SDR_COUNT:-4}

# start TAG WORKERS [instance A options] --instance [instance B options]
start() {
	local tag=$1 nw=$2 i inb=0 a=() b=() lc=0@0,1@1
	shift 2
	[ "$nw" = 2 ] && lc=0@0,1@1,2@0
	for i in "$@"; do
		if [ $inb = 0 ] && [ "$i" = --instance ]; then inb=1; continue; fi
		if [ $inb = 0 ]; then a+=("$i"); else b+=("$i"); fi
	done
	SOCK_A=$SDR_TMP/$tag-a.sock SOCK_B=$SDR_TMP/$tag-b.sock
	STATS=$SDR_TMP/$tag.json DPU_LOG=$SDR_TMP/$tag-dpu.log
	[ "${KEEP_LOG:-0}" = 1 ] || : >"$DPU_LOG"
	# shellcheck disable=SC2046
	"$SDR_DPU" $(rig_eal "sdr-ch$tag-$$" 512) --lcores=$lc -- --ring-pair --workers "$nw" \
		--name "$SOCK_A" --ip 10.0.0.1 "${a[@]}" --instance --name "$SOCK_B" --ip 10.0.0.2 \
		--stats-json "$STATS" "${b[@]}" >>"$DPU_LOG" 2>&1 &
	DPU_PID=$!
	SDR_PIDS+=("$DPU_PID")
	rig_wait_sock "$SOCK_A" "$DPU_PID" && rig_wait_sock "$SOCK_B" "$DPU_PID" ||
		{ cat "$DPU_LOG" >&2; sdr_fail "daemon did not start"; }
}

sdr_log "errors: a daemon of one worker"
start err 1
"$SDR_TEST_CHAN" errors "$SOCK_A" || sdr_fail "test_chan errors"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"

sdr_log "API: a ring pair of two workers, clean link"
start api 2
"$SDR_TEST_CHAN" api "$SOCK_A" "$SOCK_B" || { tail -30 "$DPU_LOG"; sdr_fail "test_chan api"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"

# message indices of a tool's per-message lines: in posting order
in_order() {
	awk '$1 == "msg" { if ($2 != n) { print "message " $2 " completed as number " n; bad = 1 } n++ }
	     END { exit bad || n == 0 }' "$1"
}

# finish TAG CASE SPID RPID: wait for sdr-send (SPID) and sdr-recv (RPID) of
# $SDR_TMP/TAG-{send,recv}.log, stop the daemon, fail CASE if either failed
finish() {
	local srv rrv
	wait "$3"
	srv=$?
	wait "$4"
	rrv=$?
	tail -2 "$SDR_TMP/$1-send.log"
	tail -1 "$SDR_TMP/$1-recv.log"
	rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
	[ $srv = 0 ] || { cat "$SDR_TMP/$1-send.log" "$DPU_LOG"; sdr_fail "case $2: sdr-send exited $srv"; }
	[ $rrv = 0 ] || { cat "$SDR_TMP/$1-recv.log" "$DPU_LOG"; sdr_fail "case $2: sdr-recv exited $rrv (a message lost, corrupted or written past)"; }
}

n=0
# REL [EC] [stripe=N]: stripes of N chunks of 4 KiB (default 1)
for c in "sr" "ec rs:8:2" "auto" "sr stripe=3"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # (split into its words on purpose)
	set -- $c
	rel=$1 extra=() pr=() sc=1
	[ "$rel" = ec ] && extra=(--ec "$2")
	case $c in *stripe=*) sc=${c##*stripe=} ;; esac
	extra+=(--stripe-chunks "$sc")
	sz=$sizes # (more than one stripe each)
	[ "$sc" = 1 ] || sz=12289,40000,1M,4M
	[ "$rel" = auto ] && pr=(--port-rate 1g) # the model needs a rate (auto_ring.sh)
	sdr_log "case $n: --rel $c --channels 2 --chunk-pkts 1, --link $link"
	start c$n 2 --link "$link,seed=$((40 + n))" "${pr[@]}" --instance \
		--link "$link,seed=$((50 + n))" "${pr[@]}"
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 60 \
		--channels 2 --stripe-chunks "$sc" --guard >"$SDR_TMP/c$n-recv.log" 2>&1 &
	rpid=$!
	sleep 0.3
	"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel "$rel" "${extra[@]}" \
		--channels 2 --chunk-pkts 1 --window 4 --sizes "$sz" --count "$count" \
		--seed $((60 + n)) --timeout 60 >"$SDR_TMP/c$n-send.log" 2>&1 &
	finish "c$n" "$c" $! $rpid
	in_order "$SDR_TMP/c$n-send.log" || sdr_fail "case $c: sends completed out of posting order"
	in_order "$SDR_TMP/c$n-recv.log" || sdr_fail "case $c: receives completed out of posting order"
	for s in "$SOCK_A" "$SOCK_B"; do
		grep -q "\[$s\]: .*attached (context 0, worker 0)" "$DPU_LOG" &&
			grep -q "\[$s\]: .*attached (context 1, worker 1)" "$DPU_LOG" ||
			{ grep attached "$DPU_LOG"; sdr_fail "case $c: channels not on workers 0 and 1"; }
	done
	if [ "$rel" = sr ]; then
		/usr/bin/python3 "$here/sr_check.py" --sizes "$sz" --count "$count" --ring "$STATS" \
			--channels 2 --stripe $((sc * 4096)) --min-retx 1 ||
			{ grep -A40 "drops and errors" "$DPU_LOG"; sdr_fail "case $c: counter identities"; }
	else
		ax=()
		[ "$rel" = auto ] && ax=(--auto)
		/usr/bin/python3 "$here/ec_check.py" --sizes "$sz" --count "$count" --ring "$STATS" \
			--channels 2 --stripe $((sc * 4096)) "${ax[@]}" ||
			{ grep -A40 "drops and errors" "$DPU_LOG"; sdr_fail "case $c: counter identities"; }
	fi
done

sdr_log "case 5: both DPUs killed and started again mid-transfer (--rel sr --channels 2)"
export SDR_REATTACH_MS=60000
ro=(--outage-horizon-ms 60000 --restore-window-ms 60000 --state-dir "$SDR_TMP/state")
start rs 2 "${ro[@]}" --link "delay=2ms,loss=1e-3,seed=71" --instance \
	--link "delay=2ms,loss=1e-3,seed=72"
port=$(rig_free_port)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 60 \
	--channels 2 --guard >"$SDR_TMP/rs-recv.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel sr --channels 2 --chunk-pkts 1 \
	--window 64 --sizes 5000,64K,1M,4M --count 40 --seed 77 --timeout 60 \
	>"$SDR_TMP/rs-send.log" 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q "^msg " "$SDR_TMP/rs-send.log" && break; sleep 0.1; done
grep -q "^msg " "$SDR_TMP/rs-send.log" || sdr_fail "case 5: nothing completed before the kill"
kill -KILL "$DPU_PID"
wait "$DPU_PID" 2>/dev/null
sleep 1
KEEP_LOG=1 start rs 2 "${ro[@]}" --link "delay=2ms,loss=1e-3,seed=73" --instance \
	--link "delay=2ms,loss=1e-3,seed=74"
finish rs 5 $spid $rpid
for t in send recv; do
	grep -q "daemon restarted: re-attached" "$SDR_TMP/rs-$t.log" ||
		sdr_fail "case 5: sdr-$t did not re-attach"
done
# (the contexts re-attach in any order: their indices may change, not
# their workers)
for s in "$SOCK_A" "$SOCK_B"; do
	for w in 0 1; do
		[ "$(grep -c "\[$s\]: .*attached (context [0-9]*, worker $w)" "$DPU_LOG")" = 2 ] ||
			{ grep attached "$DPU_LOG"; sdr_fail "case 5: a context not back on worker $w"; }
	done
done
echo "channels: errors, API, SR / EC / AUTO over two workers ($link), stripes of 1 and 3 chunks, and a restart: every message bit-exact, in posting order, every packet accounted for"
