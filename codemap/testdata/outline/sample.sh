#!/usr/bin/env bash
# Sample for the Bash outline.
set -euo pipefail

readonly NAME="sample"

greet() {
  echo "hello $1"
}

function cleanup {
  rm -f "$tmp"
}

function main() {
  inner() { echo inner; }
  greet "$NAME"
}

main "$@"
