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

# Targets run two at a time, each with one fuzzing worker, so the wall time
# halves on a two-core machine while each target still fuzzes for the whole
# budget. WINX_FUZZ_JOBS changes how many run at once.
max_jobs=${WINX_FUZZ_JOBS:-2}
logs=$(mktemp -d "${TMPDIR:-/tmp}/winx-fuzz-XXXXXX")
trap 'rm -rf "$logs"' EXIT

run_target() { # dir name index
	local dir=$1 name=$2 i=$3 pkg=./$1 start=$SECONDS attempt
	[[ $dir == . ]] && pkg=.
	for attempt in 1 2; do
		if go test "$pkg" -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -parallel=1 >"$logs/$i.log" 2>&1; then
			echo "fuzz: ok   $pkg $name ($((SECONDS - start))s)" >"$logs/$i.sum"
			return
		fi
		# Go 1.26's fuzz coordinator can fail a target with a bare "context
		# deadline exceeded" at the -fuzztime boundary although no input
		# failed (go.dev/issue/75804, fixed in Go 1.27). That failure, and
		# only that one (no "Failing input" written), is run once more.
		if ((attempt == 1)) && grep -q '^    context deadline exceeded$' "$logs/$i.log" &&
			! grep -q 'Failing input written to' "$logs/$i.log"; then
			echo "== fuzz: $pkg $name ended with the coordinator's deadline race (go.dev/issue/75804), no failing input; running it again"
			continue
		fi
		break
	done
	echo "fuzz: FAIL $pkg $name ($((SECONDS - start))s; crashers in $dir/testdata/fuzz/$name/)" >"$logs/$i.sum"
}

total=0
while IFS=$'\t' read -r dir name; do
	total=$((total + 1))
	echo "== fuzz: ./$dir $name for $fuzztime"
	run_target "$dir" "$name" "$total" &
	while (($(jobs -rp | wc -l) >= max_jobs)); do
		wait -n || true
	done
done <<<"$targets"
wait

failed=0
for i in $(seq 1 "$total"); do
	if grep -q '^fuzz: FAIL' "$logs/$i.sum"; then
		failed=$((failed + 1))
		cat "$logs/$i.log"
	else
		tail -n 3 "$logs/$i.log"
	fi
done
cat "$logs"/*.sum | sort -k3
if ((failed > 0)); then
	echo "fuzz: $failed of $total targets FAILED"
	exit 1
fi
echo "fuzz: all $total targets ok"
