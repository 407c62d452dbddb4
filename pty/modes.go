//go:build linux || darwin

package pty

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Modes are the input modes of the terminal's line discipline that say
// who edits a line being typed.
type Modes struct {
	// Canonical: the kernel collects a line (ICANON); a line editor such
	// as readline turns it off while it waits at its prompt.
	Canonical bool
	// Echo: the kernel echoes what is typed (ECHO); off at a password
	// prompt (and under a line editor, which echoes by itself).
	Echo bool
}

// Modes reads the terminal's modes through the master (which reads those
// of the terminal the child holds).
func (p *Process) Modes() (Modes, error) {
	var m Modes
	err := p.control(func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, getTermios)
		if err != nil {
			return err
		}
		m = Modes{Canonical: tio.Lflag&unix.ICANON != 0, Echo: tio.Lflag&unix.ECHO != 0}
		return nil
	})
	if err != nil {
		return Modes{}, fmt.Errorf("pty: terminal modes: %w", err)
	}
	return m, nil
}
