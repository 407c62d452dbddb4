package pty

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestIsEndOfOutput(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{io.EOF, true},
		{syscall.EIO, true},
		{&fs.PathError{Op: "read", Path: "/dev/ptmx", Err: syscall.EIO}, true},
		{fmt.Errorf("reading: %w", io.EOF), true},
		{os.ErrClosed, false},
		{os.ErrDeadlineExceeded, false},
		{syscall.EAGAIN, false},
		{io.ErrUnexpectedEOF, false},
	}
	for _, tt := range tests {
		if got := IsEndOfOutput(tt.err); got != tt.want {
			t.Errorf("IsEndOfOutput(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestExitStatusString(t *testing.T) {
	tests := []struct {
		st   ExitStatus
		want string
	}{
		{ExitStatus{}, "exit status 0"},
		{ExitStatus{Code: 3}, "exit status 3"},
		{ExitStatus{Code: -1, Signaled: true, Signal: syscall.SIGKILL}, "signal: killed"},
		{ExitStatus{Code: -1, Signaled: true, Signal: syscall.SIGSEGV, CoreDumped: true}, "signal: segmentation fault (core dumped)"},
	}
	for _, tt := range tests {
		if got := tt.st.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.st, got, tt.want)
		}
	}
}

func TestErrUnsupportedWrapsStandardError(t *testing.T) {
	if !errors.Is(ErrUnsupported, errors.ErrUnsupported) {
		t.Errorf("errors.Is(ErrUnsupported, errors.ErrUnsupported) = false")
	}
}
