// Package fuzz holds cross-package fuzz harnesses: raw HTTP and stdio bytes
// into the server, edit batches against a temporary tree. Fuzz targets that
// exercise a single package live beside that package's code instead; run.sh
// in this directory runs every native fuzz target in the module for a time
// budget.
package fuzz
