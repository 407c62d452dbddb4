//go:build linux

package vt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"winx/pty/testenv"
)

// These tests run real programs on a real PTY, since that is where a
// Terminal's input comes from: bash's own output, the tty's ONLCR, less and
// vi on the alternate screen. The PTY is opened with the standard library
// alone (vt may import nothing else, and its tests follow suit).

// openPTY returns the master of a new PTY of rows x cols and its slave.
func openPTY(t *testing.T, rows, cols int) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		testenv.Missing(t, "no PTY: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uint32
	var ioctlErr error
	ioctl := func(fd uintptr, req uint, arg unsafe.Pointer) {
		if ioctlErr != nil {
			return
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(req), uintptr(arg)); errno != 0 {
			ioctlErr = fmt.Errorf("ioctl %#x: %w", req, errno)
		}
	}
	err = rc.Control(func(fd uintptr) {
		unlock := int32(0)
		ioctl(fd, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
		ioctl(fd, syscall.TIOCGPTN, unsafe.Pointer(&n))
		ws := [4]uint16{uint16(rows), uint16(cols), 0, 0}
		ioctl(fd, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	})
	if err == nil {
		err = ioctlErr
	}
	if err != nil {
		testenv.Missing(t, "no PTY: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		testenv.Missing(t, "no PTY slave: %v", err)
	}
	return m, s
}

// runOnPTY runs argv on a rows x cols PTY, writes everything it prints to
// a Terminal of the same size, and returns the terminal once the program
// has exited. react, if set, is called after every read and may return
// input to type.
func runOnPTY(t *testing.T, rows, cols int, react func(*Terminal) string, argv ...string) *Terminal {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Skipf("%s not installed: %v", argv[0], err)
	}
	master, slave := openPTY(t, rows, cols)
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = []string{"TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LESS=", "LESSHISTFILE=-"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %q: %v", argv, err)
	}
	slave.Close()

	term := New(rows, cols, nil)
	deadline := time.Now().Add(20 * time.Second)
	master.SetReadDeadline(deadline)
	buf := make([]byte, 4096)
	for {
		n, err := master.Read(buf)
		term.Write(buf[:n])
		if react != nil && n > 0 {
			if in := react(term); in != "" {
				master.Write([]byte(in))
			}
		}
		// The master reads EIO once the last slave is closed.
		if errors.Is(err, syscall.EIO) || errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("reading %q: %v; screen so far:\n%s", argv, err, strings.Join(term.Screen(), "\n"))
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%q: %v; screen:\n%s", argv, err, strings.Join(term.Screen(), "\n"))
	}
	return term
}

func TestBashOnPTY(t *testing.T) {
	script := `printf 'hello\n'; stty size
printf '10%%\r50%%\r100%%\n'
printf '\033[?1049h\033[2J\033[Hsecret\033[?1049l'
printf 'caf\303\251 日本 \033[31mred\033[0m\tend\n'
for i in $(seq 1 30); do echo line$i; done
printf 'exactly forty characters wide, no more!!\n'
echo done`
	term := runOnPTY(t, 10, 40, nil, "bash", "--norc", "--noprofile", "-c", script)
	want := []string{"hello", "10 40", "100%", "café 日本 red\tend"} // the tab is given back
	for i := 1; i <= 30; i++ {
		want = append(want, fmt.Sprint("line", i))
	}
	want = append(want, "exactly forty characters wide, no more!!", "done")
	if got := term.Transcript(); got != strings.Join(want, "\n") {
		t.Errorf("Transcript() = %q, want %q", got, strings.Join(want, "\n"))
	}
	if term.AltScreenActive() {
		t.Errorf("AltScreenActive() = true after the program left it")
	}
}

// TestPagerOnPTY runs less, a full-screen program: while it runs its page
// is on Screen, and afterwards the transcript holds only what bash printed
// on the main screen around it.
func TestPagerOnPTY(t *testing.T) {
	sawPage, quit := false, false
	react := func(term *Terminal) string {
		if quit || !term.AltScreenActive() {
			return ""
		}
		screen := strings.Join(term.Screen(), "\n")
		if strings.Contains(screen, "pager line 3") && strings.Contains(screen, "(END)") {
			sawPage, quit = true, true
			return "q"
		}
		return ""
	}
	term := runOnPTY(t, 8, 40, react, "bash", "--norc", "--noprofile", "-c",
		`echo before; printf 'pager line %s\n' 1 2 3 | less; echo after`)
	if !sawPage {
		t.Errorf("never saw less's page on the alternate screen")
	}
	if got, want := term.Transcript(), "before\nafter"; got != want {
		t.Errorf("Transcript() = %q, want %q", got, want)
	}
}

// TestEditorOnPTY runs vi: it draws on the alternate screen with scroll
// regions and cursor addressing, and the transcript must not show any of it.
func TestEditorOnPTY(t *testing.T) {
	file := t.TempDir() + "/notes.txt"
	if err := os.WriteFile(file, []byte("alpha\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sawFile, quit := false, false
	react := func(term *Terminal) string {
		if quit || !term.AltScreenActive() {
			return ""
		}
		screen := term.Screen()
		if len(screen) > 1 && screen[0] == "alpha" && screen[1] == "beta" {
			sawFile, quit = true, true
			return "\x1b:q!\r"
		}
		return ""
	}
	term := runOnPTY(t, 8, 40, react, "bash", "--norc", "--noprofile", "-c",
		`echo before; vi -u NONE -i NONE -N `+file+`; echo after`)
	if !sawFile {
		t.Errorf("never saw the file in vi on the alternate screen")
	}
	if got, want := term.Transcript(), "before\nafter"; got != want {
		t.Errorf("Transcript() = %q, want %q", got, want)
	}
}
