//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Securebits (Linux UAPI, include/uapi/linux/securebits.h), each with its
// lock bit, which makes it permanent for the thread and everything it
// execs.
const (
	secbitNoroot                  = 1 << 0 // uid 0 gains no capability on exec
	secbitNorootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2 // a uid change does not touch the capability sets
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5 // keep-caps stays off: setuid(2) away from 0 empties the sets
	secbitNoCapAmbientRaise       = 1 << 6 // no ambient capability may be raised
	secbitNoCapAmbientRaiseLocked = 1 << 7

	// launcherSecurebits are the securebits of a confined shell. They
	// need CAP_SETPCAP to set; with no_new_privs and empty sets (which
	// need nothing) an exec gains nothing even without them, so they are
	// a second lock, not the first.
	launcherSecurebits = secbitNoroot | secbitNorootLocked |
		secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked |
		secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// maxCapLastCapSize bounds the read of /proc/sys/kernel/cap_last_cap, a
// small decimal number.
const maxCapLastCapSize = 16

// fallbackLastCap is the capability numbers tried when
// /proc/sys/kernel/cap_last_cap cannot be read: every bit of the 64-bit
// capability sets. The kernel answers EINVAL for those it does not know.
const fallbackLastCap = 63

// dropCapabilities takes every capability away from the calling thread and
// from what it execs: it sets launcherSecurebits, empties the bounding set
// (both only possible with CAP_SETPCAP, so EPERM, as for an unprivileged
// launcher, is ignored: it has nothing an exec could give back under
// no_new_privs), clears the ambient set and sets the effective, permitted
// and inheritable sets to zero, then checks that they are. The caller must
// have locked its goroutine to the thread and set no_new_privs.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, launcherSecurebits, 0, 0, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("sandbox: set securebits: %w", err)
	}
	for c := 0; c <= lastCap(); c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err != nil && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("sandbox: drop capability %d from the bounding set: %w", c, err)
		}
	}
	// Before Linux 4.3 there is no ambient set (EINVAL), and nothing to
	// clear.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sandbox: clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData // version 3: two 32-bit halves
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("sandbox: drop capabilities: %w", err)
	}
	var got [2]unix.CapUserData
	if err := unix.Capget(&hdr, &got[0]); err != nil {
		return fmt.Errorf("sandbox: read capabilities back: %w", err)
	}
	if got != none {
		return fmt.Errorf("sandbox: capabilities left after dropping them: %+v", got)
	}
	return nil
}

// lastCap is the highest capability number this kernel knows.
func lastCap() int {
	f, err := os.Open("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return fallbackLastCap
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCapLastCapSize))
	if err != nil {
		return fallbackLastCap
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 || n > fallbackLastCap {
		return fallbackLastCap
	}
	return n
}
