# Helpers of the control-plane tests (sourced after lib.sh).
# shellcheck shell=bash
: "${SDR_TEST_CTL:=$SDR_BUILD/tests/integration/test_ctl}"

# Run test_ctl with the given arguments, its output in $SDR_TMP/ctl.log;
# exit 77 on its skip, fail on its failure.
sdr_ctl_run() {
	local rc
	"$SDR_TEST_CTL" "$@" >"$SDR_TMP/ctl.log" 2>&1
	rc=$?
	cat "$SDR_TMP/ctl.log"
	[ $rc = 77 ] && sdr_skip "$(grep -m1 SKIP "$SDR_TMP/ctl.log")"
	[ $rc = 0 ] || { tail -30 "$DPU_LOG"; sdr_fail "test_ctl $1 failed (exit $rc)"; }
}

# Every "expect COUNTER N" line of the last run (the last value of each
# counter) against the daemon's stats JSON, after rig_stop.
sdr_ctl_expect() {
	local name want got
	[ -s "$STATS" ] || sdr_fail "no stats JSON"
	while read -r name want; do
		got=$(sdr_json_drop "$name")
		[ "$got" = "$want" ] || sdr_fail "counter $name = $got, expected $want"
		echo "counter $name = $got (expected $want)"
	done < <(awk '$1 == "expect" { v[$2] = $3 } END { for (k in v) print k, v[k] }' "$SDR_TMP/ctl.log")
}
