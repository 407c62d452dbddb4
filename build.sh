#!/usr/bin/env bash
# Builds, tests and benchmarks winx from the module root.
#
#   ./build.sh          build bin/winx, bin/winxd and bin/winx-guardian, print their sha256
#   ./build.sh test     the whole suite: go vet, race-enabled tests, the cgo-free build and
#                       its tests, the reproducibility check and every fuzz target for
#                       $WINX_FUZZTIME (default 20s) each
#   ./build.sh repro    only the reproducibility check: build twice, compare every byte
#   ./build.sh bench    the end-to-end benchmark: winx and peer MCP servers driven by one
#                       independent client (the official Go SDK) in one run, p50 of each
#                       measure and its ratio to the peer (it reports; it never fails on time).
#                       The client and peers come from $WINX_SHARED (default ../shared); the peers
#                       are installed once into $WINX_BENCH_PEERS (default: a cache dir)
#   ./build.sh bench go the Go benchmarks of every package
#   ./build.sh bench fair [SERVE FLAGS]
#                       the fairness benchmark: p1..p3's latency, idle and while p0 sends
#                       8 MiB bodies, reads 1 MB files, runs `sleep 2` or floods without a
#                       token, each principal its own process ($WINX_BENCH_FAIR_FLAGS: its
#                       own flags, e.g. "-rest 50s" with the default rate limit)
#   ./build.sh install PREFIX
#                       build into PREFIX/lib/winx/<build id>/ (never changed afterwards),
#                       smoke-test it there, then switch PREFIX/lib/winx/current to it with
#                       one rename; PREFIX/bin/{winx,winxd,winx-guardian} point through it;
#                       the docs and the systemd unit go in PREFIX/share/doc/winx, the man
#                       page in PREFIX/share/man/man1, bash, zsh and fish completions in
#                       PREFIX/share/{bash-completion/completions,zsh/site-functions,
#                       fish/vendor_completions.d}. With $DESTDIR set, everything goes
#                       under $DESTDIR/PREFIX (for packagers)
#   ./build.sh dist OUT reproducible release: OUT/winx-<rev>-<os>-<arch>.tar.gz for
#                       linux/amd64 and darwin/arm64 ($WINX_DIST_PLATFORMS), an SPDX
#                       (.spdx.json) and a CycloneDX (.cdx.json) SBOM of each, a .sha256
#                       beside every one of them and SHA256SUMS of all; times come from
#                       $SOURCE_DATE_EPOCH, else the commit
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
	local fuzztime=${WINX_FUZZTIME:-20s}
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
	# The flood test measures the guardian's peak RSS, which the race
	# detector's shadow memory would inflate: it runs without -race.
	begin "go test -run TestFloodMemoryAndJournal ./guardian (without -race)"
	go test -count=1 -timeout 10m -run '^TestFloodMemoryAndJournal$' ./guardian
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
	if [[ ${1:-} == fair ]]; then
		# One principal's load against three others' latency, each client its
		# own process, on the freshly built binary.
		begin "fairness benchmark"
		local dir
		dir=$(mktemp -d "${TMPDIR:-/tmp}/winx-fairbench-XXXXXX")
		tmpdirs+=("$dir")
		build_into "$dir/bin"
		go run ./cmd/internal/fairbench -winx "$dir/bin/winx" -n "${WINX_BENCH_N:-200}" ${WINX_BENCH_FAIR_FLAGS:-} -- "${@:2}"
		return
	fi
	if [[ ${1:-} == go ]]; then
		begin "go test -run='^\$' -bench=. -benchmem ./..."
		go test -run='^$' -bench=. -benchmem ./...
		return
	fi
	begin "end-to-end benchmark"
	local tmp clients peers shared=${WINX_SHARED:-../shared}
	if [[ ! -x $shared/mcpclients/setup.sh || ! -f $shared/peers/setup.sh ]]; then
		echo "bench: $shared has no mcpclients/setup.sh and peers/setup.sh; set WINX_SHARED" >&2
		return 1
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/winx-bench-XXXXXX")
	tmpdirs+=("$tmp")
	build_into "$tmp/bin"
	# The client and the reference server live outside the module.
	clients=$("$shared/mcpclients/setup.sh" "$tmp/clients" | tail -n 1)
	peers=${WINX_BENCH_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/winx-bench-peers}
	if [[ ! -f $peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js ]]; then
		sh "$shared/peers/setup.sh" "$peers" >/dev/null
	fi
	go run ./cmd/internal/e2ebench -winx "$tmp/bin/winx" -probe "$clients/mcpprobe" \
		-testserver "$clients/testserver" -peers "$peers" -n "${WINX_BENCH_N:-200}"
}

# smoke DIR runs the freshly built binaries in DIR: each prints its identity,
# and winx answers an MCP handshake over stdio.
smoke() {
	local dir=$1 name out
	for name in "${binaries[@]}"; do
		"$dir/$name" -version >/dev/null
	done
	out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"build.sh","version":"1"}}}' |
		WINX_RUNTIME=embedded timeout 30 "$dir/winx" 2>/dev/null | head -n 1)
	if [[ $out != *'"serverInfo"'* ]]; then
		echo "install: smoke test: $dir/winx did not answer the handshake: ${out@Q}" >&2
		return 1
	fi
}

# swap_link TARGET LINK points LINK at TARGET by renaming a new symlink over
# it: a process that resolves LINK sees the old target or the new one, never
# nothing.
swap_link() {
	local target=$1 link=$2 tmp
	tmp="$(dirname "$link")/.$(basename "$link").tmp.$$"
	ln -sfn "$target" "$tmp"
	mv -Tf "$tmp" "$link"
}

install_prefix() {
	begin "install into ${1:-}"
	local prefix=${1:-} lib tmp id dest name
	if [[ -z $prefix ]]; then
		echo "usage: ./build.sh install PREFIX" >&2
		stage=usage
		return 2
	fi
	# $DESTDIR stages the tree for a package: the links are relative, so
	# they hold once the tree is moved to PREFIX.
	local root=${DESTDIR:-}$prefix
	mkdir -p "$root/lib/winx" "$root/bin" "$root/share/doc/winx"
	root=$(cd "$root" && pwd -P)
	prefix=$root
	lib=$prefix/lib/winx
	# Built next to its final place, so that moving it in is a rename.
	tmp=$(mktemp -d "$lib/.build-XXXXXX")
	tmpdirs+=("$tmp")
	build_into "$tmp"
	smoke "$tmp"
	id=$( (cd "$tmp" && sha256sum "${binaries[@]}") | sha256sum | cut -c1-16)
	dest=$lib/$id
	if [[ -d $dest ]]; then
		echo "install: build $id is installed already"
	else
		"$tmp/winx" --version >"$tmp/VERSION"
		chmod 0555 "${binaries[@]/#/$tmp/}"
		chmod 0444 "$tmp/VERSION"
		chmod 0555 "$tmp"
		mv -T "$tmp" "$dest"
	fi
	# One rename switches the three binaries together; the bin links point
	# through "current" and are written once.
	swap_link "$id" "$lib/current"
	for name in "${binaries[@]}"; do
		if [[ $(readlink "$prefix/bin/$name" 2>/dev/null) != "../lib/winx/current/$name" ]]; then
			swap_link "../lib/winx/current/$name" "$prefix/bin/$name"
		fi
	done
	# The docs the unit's Documentation= and the README point at, the man
	# page, and the completions where each shell looks for them under a
	# prefix.
	install -m 0644 README.md SECURITY.md docs/deployment.md docs/clients.md docs/winx.service "$prefix/share/doc/winx/"
	install -D -m 0644 docs/winx.1 "$prefix/share/man/man1/winx.1"
	install -D -m 0644 docs/completions/winx.bash "$prefix/share/bash-completion/completions/winx"
	install -D -m 0644 docs/completions/_winx "$prefix/share/zsh/site-functions/_winx"
	install -D -m 0644 docs/completions/winx.fish "$prefix/share/fish/vendor_completions.d/winx.fish"
	echo "install: $prefix/bin/{${binaries[*]}} -> lib/winx/$id ($(cat "$dest/VERSION"))"
	echo "install: docs in $prefix/share/doc/winx, man page winx(1), bash, zsh and fish completions in $prefix/share"
	echo "install: earlier builds stay in $lib for a rollback: ./build.sh install or ln -sfn <id> $lib/current"
}

# dist_platform OS ARCH STAGE builds the release binaries of one platform into
# STAGE. The host's winx links tree-sitter through cgo, as ./build.sh does;
# other platforms are cross-compiled without cgo (winx then answers that code
# navigation is unavailable).
dist_platform() {
	local os=$1 arch=$2 stage_dir=$3 name cgo
	for name in "${binaries[@]}"; do
		cgo=0
		[[ $name == winx && $os == $(go env GOHOSTOS) && $arch == $(go env GOHOSTARCH) ]] && cgo=1
		CGO_ENABLED=$cgo GOOS=$os GOARCH=$arch GOFLAGS=-mod=readonly \
			go build -trimpath -buildvcs=true -ldflags='-s -w -buildid=' -o "$stage_dir/$name" "./cmd/$name"
	done
}

dist() {
	begin "dist into ${1:-}"
	local out=${1:-} rev epoch tmp plat os arch base
	if [[ -z $out ]]; then
		echo "usage: ./build.sh dist OUT" >&2
		stage=usage
		return 2
	fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd -P)
	rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	git diff --quiet HEAD 2>/dev/null || rev+=-dirty
	# The one time stamp of the archives and the SBOMs: the reproducible
	# builds convention's variable, else the commit's time.
	epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/winx-dist-XXXXXX")
	tmpdirs+=("$tmp")
	go build -o "$tmp/sbom" ./cmd/internal/sbom
	for plat in ${WINX_DIST_PLATFORMS:-linux/amd64 darwin/arm64}; do
		os=${plat%/*} arch=${plat#*/}
		base=winx-$rev-$os-$arch
		mkdir -p "$tmp/$base/docs"
		dist_platform "$os" "$arch" "$tmp/$base"
		mkdir -p "$tmp/$base/completions"
		cp README.md SECURITY.md "$tmp/$base/"
		find docs -maxdepth 1 -type f -exec cp {} "$tmp/$base/docs/" \;
		cp docs/completions/* "$tmp/$base/completions/"
		chmod 0755 "$tmp/$base" "$tmp/$base/docs" "$tmp/$base/completions" "${binaries[@]/#/$tmp/$base/}"
		chmod 0644 "$tmp/$base"/*.md "$tmp/$base"/docs/* "$tmp/$base"/completions/*
		# Fixed order, times, owners and modes, and gzip without a name or a
		# time stamp: the same tree gives the same archive bytes.
		tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
			-C "$tmp" -cf - "$base" | gzip -n -9 >"$out/$base.tar.gz"
		"$tmp/sbom" -name "$base" -created "$epoch" -spdx "$out/$base.spdx.json" -cyclonedx "$out/$base.cdx.json" \
			"${binaries[@]/#/$tmp/$base/}"
		echo "dist: $out/$base.tar.gz"
	done
	# Each artifact's own checksum file, as `sha256sum -c FILE.sha256`
	# checks it, and one file of them all.
	local f
	(
		cd "$out"
		for f in winx-"$rev"-*.tar.gz winx-"$rev"-*.spdx.json winx-"$rev"-*.cdx.json; do
			sha256sum -- "$f" >"$f.sha256"
		done
		sha256sum -- winx-"$rev"-*.tar.gz winx-"$rev"-*.spdx.json winx-"$rev"-*.cdx.json >SHA256SUMS
	)
	cat "$out/SHA256SUMS"
}

case ${1:-build} in
build) build ;;
test) suite ;;
repro) repro ;;
bench) bench "${@:2}" ;;
install) install_prefix "${2:-}" ;;
dist) dist "${2:-}" ;;
-h | --help | help)
	# The header comment, whatever its length.
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$(basename "$0")" # cd'ed next to it above
	;;
*)
	echo "build.sh: unknown command ${1@Q}; want one of: build, test, repro, bench, install PREFIX, dist OUT" >&2
	stage=usage
	exit 2
	;;
esac
