#!/usr/bin/env bash
# Builds, tests and benchmarks winx from the module root.
#
#   ./build.sh          build bin/winx, bin/winxd and bin/winx-guardian, print their sha256
#   ./build.sh test     the whole suite: go vet, race-enabled tests, the cgo-free build and
#                       its tests, the reproducibility check and every fuzz target for
#                       $WINX_FUZZTIME (default 30s) each
#   ./build.sh repro    only the reproducibility check: build twice, compare every byte
#   ./build.sh bench    Go benchmarks (they report; they never fail on time)
set -euo pipefail

cd "$(dirname "$0")"
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH

binaries=(winx winxd winx-guardian)
stage=setup
tmpdirs=()

cleanup() {
	local rc=$?
	if ((${#tmpdirs[@]})); then
		rm -rf "${tmpdirs[@]}"
	fi
	if ((rc != 0)) && [[ $stage != usage ]]; then
		echo "build.sh: FAILED in stage: $stage (exit $rc)" >&2
	fi
}
trap cleanup EXIT

begin() {
	stage=$1
	printf '\n== build.sh: %s\n' "$stage"
}

# build_into DIR builds every binary into DIR. This is the one place the release
# build flags live; `./build.sh` and the reproducibility check both use it.
build_into() {
	local out=$1 name
	mkdir -p "$out"
	for name in "${binaries[@]}"; do
		# Only winx links codemap (tree-sitter, C); the daemon and the
		# guardian are pure Go and static. The C compiler is the system's
		# gcc; -trimpath maps its paths too, so two builds on one machine
		# give the same bytes. GOFLAGS is pinned so that flags from the
		# environment or the user's go env file cannot change the bytes.
		local cgo=0
		[[ $name == winx ]] && cgo=1
		CGO_ENABLED=$cgo GOFLAGS=-mod=readonly \
			go build -trimpath -buildvcs=true -ldflags='-s -w -buildid=' -o "$out/$name" "./cmd/$name"
	done
}

build() {
	begin "build into ./bin"
	build_into bin
	sha256sum bin/*
}

# repro builds everything twice into fresh directories, the second time with an
# empty build cache so that every package is really compiled again, and fails
# unless the binaries are byte-for-byte identical.
repro() {
	begin "reproducibility check"
	local tmp name
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/winx-repro-XXXXXX")
	tmpdirs+=("$tmp")
	build_into "$tmp/a"
	GOCACHE="$tmp/gocache" build_into "$tmp/b"
	for name in "${binaries[@]}"; do
		if ! cmp "$tmp/a/$name" "$tmp/b/$name"; then
			sha256sum "$tmp/a/$name" "$tmp/b/$name" >&2
			echo "repro: $name differs between two builds" >&2
			return 1
		fi
		(cd "$tmp/a" && sha256sum "$name")
	done
	echo "repro: OK: ${#binaries[@]} binaries identical across two builds (second with a fresh build cache)"
}

suite() {
	local fuzztime=${WINX_FUZZTIME:-30s}
	begin "gofmt -l ."
	local unformatted
	unformatted=$(gofmt -l .)
	if [[ -n $unformatted ]]; then
		echo "gofmt: these files are not formatted:" >&2
		echo "$unformatted" >&2
		return 1
	fi
	begin "go vet ./..."
	go vet ./...
	begin "go test -count=1 -race -timeout 15m ./..."
	go test -count=1 -race -timeout 15m ./...
	# Without cgo the server still builds and its packages that change with
	# the build (navigation answers "unavailable") still pass.
	begin "CGO_ENABLED=0: go vet ./... and go test ./codemap/... ./mcp/..."
	CGO_ENABLED=0 go vet ./...
	CGO_ENABLED=0 go test -count=1 -timeout 10m ./codemap/... ./mcp/...
	repro
	begin "fuzz targets, $fuzztime each"
	fuzz/run.sh "$fuzztime"
	stage=done
	echo
	echo "build.sh test: OK: vet, race tests, tests without cgo, reproducible build and fuzzing ($fuzztime per target)"
}

bench() {
	begin "go test -run='^\$' -bench=. -benchmem ./..."
	go test -run='^$' -bench=. -benchmem ./...
}

case ${1:-build} in
build) build ;;
test) suite ;;
repro) repro ;;
bench) bench ;;
-h | --help | help)
	sed -n '2,9s/^# \{0,1\}//p' "$0"
	;;
*)
	echo "build.sh: unknown command ${1@Q}; want one of: build, test, repro, bench" >&2
	stage=usage
	exit 2
	;;
esac
