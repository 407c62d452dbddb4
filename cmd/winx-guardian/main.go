// Command winx-guardian is the owner of one logical winx session: its PTY, working directory and output journal.
// Until the durable sessions work lands it only reports its build identity;
// every other invocation says so and exits 2.
package main

import "winx/cmd/internal/placeholder"

func main() {
	placeholder.Command{Name: "winx-guardian", Role: "session guardian"}.Main()
}
