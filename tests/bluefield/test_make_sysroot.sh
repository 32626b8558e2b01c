#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# test_make_sysroot.sh - hw/bluefield/make-sysroot.sh against a simulated
# fresh Debian machine (no network, no root needed, a few seconds).
#
# dpkg, apt-get, apt-cache, dpkg-deb and id are stubs that keep their state in
# a temporary directory: `apt-get update` fetches package lists for exactly
# the architectures dpkg knows at that moment, and `apt-cache` only knows
# arm64 packages once arm64 lists were fetched. The cross tools are absent
# until `apt-get install` "installs" them. Checks:
#   1. fresh machine (no cross tools, no arm64 architecture): the script
#      installs the tools, adds arm64, fetches the lists again for
#      amd64 + arm64 and makes the sysroot (exit 0, stamp written);
#   2. a second run reuses the sysroot without any apt-get call;
#   3. arm64 known to dpkg but its lists gone (tools installed): one
#      apt-get update, then the sysroot is made.
#
# Usage: test_make_sysroot.sh [path/to/make-sysroot.sh]

set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script=${1:-$here/../../hw/bluefield/make-sysroot.sh}
[ -f "$script" ] || { echo "FAIL: no $script"; exit 1; }

tmp=$(mktemp -d /tmp/sdr-test-sysroot.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# PATH: the stubs, then every real program except the stubbed and the cross tools.
mkdir -p "$tmp/stub" "$tmp/bin" "$tmp/state"
for f in /usr/local/bin/* /usr/bin/* /usr/sbin/* /bin/* /sbin/*; do
	n=${f##*/}
	case "$n" in
	dpkg | dpkg-deb | apt-get | apt-cache | id | aarch64-linux-gnu-* | qemu-aarch64-static) continue ;;
	esac
	[ -e "$tmp/bin/$n" ] || ln -s "$f" "$tmp/bin/$n" 2>/dev/null
done

st=$tmp/state
cat > "$tmp/stub/id" <<'EOF'
#!/bin/bash
[ "${1:-}" = -u ] && { echo 0; exit 0; }
exec /usr/bin/id "$@"
EOF
cat > "$tmp/stub/dpkg" <<EOF
#!/bin/bash
st=$st
echo "dpkg \$*" >> \$st/calls
case "\$1" in
--print-architecture) echo amd64 ;;
--print-foreign-architectures) cat \$st/foreign 2>/dev/null || true ;;
--add-architecture) echo "\$2" >> \$st/foreign ;;
*) echo "dpkg stub: \$*" >&2; exit 2 ;;
esac
EOF
cat > "$tmp/stub/apt-get" <<EOF
#!/bin/bash
st=$st
stub=$tmp/stub
echo "apt-get \$*" >> \$st/calls
cmd=""
for a in "\$@"; do case "\$a" in -*|*=*) ;; *) [ -z "\$cmd" ] && cmd=\$a ;; esac; done
case "\$cmd" in
update) { echo amd64; cat \$st/foreign 2>/dev/null || true; } > \$st/lists ;;
install)
	for a in "\$@"; do
		case "\$a" in
		gcc-aarch64-linux-gnu) printf '#!/bin/sh\n' > \$stub/aarch64-linux-gnu-gcc; chmod +x \$stub/aarch64-linux-gnu-gcc ;;
		qemu-user-static) printf '#!/bin/sh\n' > \$stub/qemu-aarch64-static; chmod +x \$stub/qemu-aarch64-static ;;
		esac
	done ;;
download)
	grep -qx arm64 \$st/lists 2>/dev/null || exit 100
	for a in "\$@"; do case "\$a" in *:arm64) : > "\${a%%:*}_1_arm64.deb" ;; esac; done ;;
*) echo "apt-get stub: \$*" >&2; exit 2 ;;
esac
EOF
cat > "$tmp/stub/apt-cache" <<EOF
#!/bin/bash
st=$st
echo "apt-cache \$*" >> \$st/calls
grep -qx arm64 \$st/lists 2>/dev/null || exit 100
case "\$1" in
show) echo "Package: \${2%%:*}" ;;
depends) echo libdpdk-dev:arm64; echo libisal-dev:arm64 ;;
*) exit 2 ;;
esac
EOF
cat > "$tmp/stub/dpkg-deb" <<'EOF'
#!/bin/bash
case "$1" in
-x) mkdir -p "$3/usr/lib/aarch64-linux-gnu" && touch "$3/usr/lib/aarch64-linux-gnu/${2##*/}.so" ;;
-f) n=${2##*/}; echo "Package: ${n%%_*}"; echo "Version: 1" ;;
*) exit 2 ;;
esac
EOF
chmod +x "$tmp/stub"/*

run() { # label -> runs the script, output in $tmp/<label>.log, sets rc
	: > "$st/calls"
	rc=0
	env -i PATH="$tmp/stub:$tmp/bin" HOME="$tmp" TMPDIR="$tmp" \
		bash "$script" "$tmp/sysroot" > "$tmp/$1.log" 2>&1 || rc=$?
	echo "--- $1: exit $rc"
	sed 's/^/    /' "$tmp/$1.log"
}
updates() { grep -c '^apt-get .*update' "$st/calls"; }

# 1. fresh machine
run fresh
[ $rc = 0 ] && ok "fresh machine: sysroot made" || bad "fresh machine: exit $rc (expected 0)"
[ -f "$tmp/sysroot/.sdr-sysroot-stamp" ] && ok "stamp written" || bad "no stamp in the sysroot"
add=$(grep -n '^dpkg --add-architecture arm64' "$st/calls" | cut -d: -f1 | head -n1)
upd=$(grep -n '^apt-get .*update' "$st/calls" | cut -d: -f1 | tail -n1)
if [ -n "$add" ] && [ -n "$upd" ] && [ "$upd" -gt "$add" ]; then
	ok "apt-get update ran after dpkg --add-architecture arm64"
else
	bad "no apt-get update after dpkg --add-architecture arm64 (calls: $(paste -sd';' "$st/calls"))"
fi
grep -qx arm64 "$st/lists" && ok "arm64 lists fetched" || bad "arm64 lists never fetched"
[ "$(updates)" = 2 ] && ok "two apt-get updates (amd64, then amd64 + arm64)" ||
	bad "$(updates) apt-get updates on a fresh machine (expected 2)"

# 2. reuse: no apt at all
run reuse
[ $rc = 0 ] && grep -q 'reusing' "$tmp/reuse.log" && ok "second run reuses the sysroot" ||
	bad "second run: exit $rc, no 'reusing'"
grep -q '^apt-get' "$st/calls" && bad "second run called apt-get" || ok "second run: no apt-get"

# 3. arm64 added earlier, lists gone
rm -rf "$tmp/sysroot"
echo amd64 > "$st/lists"
run lists_gone
[ $rc = 0 ] && [ -f "$tmp/sysroot/.sdr-sysroot-stamp" ] && ok "arm64 lists missing: fetched, sysroot made" ||
	bad "arm64 lists missing: exit $rc"
[ "$(updates)" = 1 ] && ok "one apt-get update" || bad "$(updates) apt-get updates (expected 1)"

[ $fails = 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo "PASS"
