#!/usr/bin/env bash
# Release checks, run by .ci/run: ./build.sh install twice into a temporary
# prefix with a winx of the first install running across the second, and
# ./build.sh dist twice giving identical archives whose SHA256SUMS verify and
# whose SBOM lists exactly the modules `go version -m` reports.
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

# dist, twice.
(cd "$root" && ./build.sh dist "$work/d1" >/dev/null && ./build.sh dist "$work/d2" >/dev/null)
(cd "$work/d1" && ls) >"$work/list1"
(cd "$work/d2" && ls) >"$work/list2"
cmp -s "$work/list1" "$work/list2" || fail "the two dist runs wrote different files"
while read -r f; do
	cmp "$work/d1/$f" "$work/d2/$f" || fail "$f differs between two dist runs"
done <"$work/list1"
(cd "$work/d1" && sha256sum --quiet -c SHA256SUMS) || fail "sha256sum -c SHA256SUMS"
n=0
for archive in "$work"/d1/*.tar.gz; do
	base=$(basename "$archive" .tar.gz)
	mkdir -p "$work/x/$base"
	tar -C "$work/x" -xzf "$archive"
	# The modules go version -m reports for the three binaries, and the
	# modules the SBOM lists.
	go version -m "$work/x/$base"/{winx,winxd,winx-guardian} | awk '$1 == "dep" { print $2 "@" $3 }' | sort -u >"$work/mods-go"
	grep -o '"referenceLocator": "pkg:golang/[^"]*"' "$work/d1/$base.spdx.json" | sed 's/.*pkg:golang\///; s/"$//' |
		grep -v '^stdlib@' | sort -u >"$work/mods-sbom"
	diff "$work/mods-go" "$work/mods-sbom" || fail "$base: the SBOM's modules differ from go version -m (< go, > SBOM)"
	grep -q "\"versionInfo\": \"$(go version -m "$work/x/$base/winx" | head -n 1 | awk '{print $2}' | sed 's/^go//')\"" "$work/d1/$base.spdx.json" ||
		fail "$base: the SBOM does not name the toolchain"
	n=$((n + 1))
done
((n >= 2)) || fail "dist wrote $n archives, want linux/amd64 and darwin/arm64"
echo "release-test: dist: OK ($n archives identical across two runs, SHA256SUMS verified, SBOM modules = go version -m)"
