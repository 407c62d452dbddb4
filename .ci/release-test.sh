#!/usr/bin/env bash
# Release checks, run by .ci/run: ./build.sh install twice into a temporary
# prefix with a winx of the first install running across the second. The
# release archives (./build.sh dist twice: the same bytes, the .sha256 files,
# both SBOMs against `go version -m`) are checked by the Go test TestDist in
# cmd/internal/sbom, which ./build.sh test runs.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/winx-release-test-XXXXXX")
winx_pid=
cleanup() {
	[[ -n $winx_pid ]] && kill "$winx_pid" 2>/dev/null
	chmod -R u+w "$work" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "release-test: FAIL: $*" >&2
	exit 1
}
# The go command finds its caches through HOME: pin them before HOME moves,
# so that the builds below use the machine's warm caches and no network.
GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
export GOCACHE GOMODCACHE GOPATH
mkdir -p "$work"/{home,state,run,src}
chmod 0700 "$work/run"
export HOME=$work/home XDG_STATE_HOME=$work/state XDG_RUNTIME_DIR=$work/run
unset WINX_SOCKET

prefix=$work/prefix
"$root/build.sh" install "$prefix" >/dev/null
first=$(readlink "$prefix/lib/winx/current")

# A winx of the first install, serving over stdio.
coproc WINX { WINX_RUNTIME=embedded exec "$prefix/bin/winx" 2>/dev/null; }
winx_pid=$WINX_PID
echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"release-test","version":"1"}}}' >&"${WINX[1]}"
read -r -t 30 line <&"${WINX[0]}" || fail "no handshake answer from the first install"
[[ $line == *'"serverInfo"'* ]] || fail "handshake answer: $line"

# Another build: the same tree with one log message changed.
(cd "$root" && git ls-files -z | tar --null -T - -cf -) | tar -C "$work/src" -xf -
sed -i 's/"winxd serving"/"winxd serving (release test)"/' "$work/src/cmd/winxd/main.go"
grep -q 'release test' "$work/src/cmd/winxd/main.go" || fail "could not change the copy"
"$work/src/build.sh" install "$prefix" >/dev/null
second=$(readlink "$prefix/lib/winx/current")
[[ $second != "$first" ]] || fail "the second build has the same id $first"
[[ -x $prefix/lib/winx/$first/winx ]] || fail "the first build is gone"
for b in winx winxd winx-guardian; do
	[[ $(readlink -f "$prefix/bin/$b") == "$prefix/lib/winx/$second/$b" ]] || fail "bin/$b does not point at the second build"
done

# The running winx still runs the first build's file and still answers.
[[ $(readlink "/proc/$winx_pid/exe") == "$prefix/lib/winx/$first/winx" ]] || fail "the running winx's executable moved: $(readlink "/proc/$winx_pid/exe")"
echo '{"jsonrpc":"2.0","id":2,"method":"ping"}' >&"${WINX[1]}"
read -r -t 30 line <&"${WINX[0]}" || fail "the running winx stopped answering after the second install"
[[ $line == *'"id":2'* && $line == *'"result"'* ]] || fail "ping answer: $line"
"$prefix/bin/winx" --version >/dev/null || fail "a new launch of bin/winx fails"
echo "release-test: install: OK (build $first, then $second; the running winx kept answering)"
