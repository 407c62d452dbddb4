// Command winxd is the winx control plane: it discovers, spawns and sweeps the per-session guardians.
// Until the durable sessions work lands it only reports its build identity;
// every other invocation says so and exits 2.
package main

import "winx/cmd/internal/placeholder"

func main() {
	placeholder.Command{Name: "winxd", Role: "control plane"}.Main()
}
