#!/usr/bin/env bash
# Runs every native Go fuzz target in the module, one after another, each for
# the given time budget (a -fuzztime value: 30s, 2m, 1000x). Exits non-zero if
# any target fails; new crashers are left in the package's testdata/fuzz/.
#
#   fuzz/run.sh 30s
set -euo pipefail

fuzztime=${1:?usage: fuzz/run.sh FUZZTIME (e.g. 30s)}
cd "$(dirname "$0")/.."
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH

# Lines "DIR<TAB>NAME" for every func FuzzXxx(f *testing.F) in a _test.go file,
# skipping directories the go command ignores (testdata, _x, .x).
targets=$(
	grep -r --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . |
		sed 's|^\./||' |
		grep -v -E '(^|/)(testdata|[._][^/]*)/' |
		sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*$|\1\t\2|; s|^[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*$|.\t\1|' |
		sort -u
) || true

if [[ -z $targets ]]; then
	echo "fuzz: no fuzz targets found"
	exit 0
fi

summary=()
failed=0
total=0
while IFS=$'\t' read -r dir name; do
	total=$((total + 1))
	pkg=./$dir
	[[ $dir == . ]] && pkg=.
	echo "== fuzz: $pkg $name for $fuzztime"
	start=$SECONDS
	if go test "$pkg" -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime"; then
		summary+=("fuzz: ok   $pkg $name ($((SECONDS - start))s)")
	else
		failed=$((failed + 1))
		summary+=("fuzz: FAIL $pkg $name ($((SECONDS - start))s; crashers in $dir/testdata/fuzz/$name/)")
	fi
done <<<"$targets"

printf '%s\n' "${summary[@]}"
if ((failed > 0)); then
	echo "fuzz: $failed of $total targets FAILED"
	exit 1
fi
echo "fuzz: all $total targets ok"
