package entry

import (
	"os"
	"strings"
	"unsafe"
)

// ScrubArgs overwrites every occurrence of secret in the process's own
// argument vector, so that /proc/PID/cmdline, which every local user and
// every session shell can read, stops showing it once start-up has read it.
// The strings of os.Args share their bytes with the vector the kernel
// reports (the runtime does not copy them), which is what makes this work;
// the caller must hold its own copy of secret (strings.Clone) before the
// call, since every string sliced from an argument changes with it. The
// window between exec and this call remains.
func ScrubArgs(secret string) {
	if secret == "" {
		return
	}
	for _, a := range os.Args {
		for off := 0; ; {
			i := strings.Index(a[off:], secret)
			if i < 0 {
				break
			}
			b := unsafe.Slice(unsafe.StringData(a), len(a))
			for j := off + i; j < off+i+len(secret); j++ {
				b[j] = '*'
			}
			off += i + len(secret)
		}
	}
}
