package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// reexecSupported: the re-execution needs /proc/self/exe and execve.
const reexecSupported = true

// reexecWith replaces this process's image with its own executable, the
// same arguments and env, handing c over on a descriptor. It returns only
// on failure. The pid stays, so supervisors, signals and the parent's wait
// are unaffected.
func reexecWith(env []string, c credentials) error {
	payload := c.marshal()
	if len(payload) > maxCredentialBytes {
		return fmt.Errorf("%w: the credentials are larger than %d bytes", ErrCredentialHandoff, maxCredentialBytes)
	}
	fd, err := credentialFD(payload)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCredentialHandoff, err)
	}
	env = append(env[:len(env):len(env)], credentialFDVar+"="+strconv.Itoa(fd))
	// /proc/self/exe is this very file, even if its path was replaced
	// or removed since start.
	err = unix.Exec("/proc/self/exe", os.Args, env)
	unix.Close(fd)
	return fmt.Errorf("winx: re-executing without the credential variables in the environment: %w", err)
}

// credentialFD returns a descriptor, without close-on-exec, from which
// payload can be read to its end.
//
// A connected Unix socket is preferred: the window between execve and the
// new image's entry.Harden leaves the process dumpable, and where
// /proc/PID/fd/N of a pipe or a memfd can be opened (and read) by a
// same-uid process in that window, a socket's cannot. The socket takes
// what its buffer holds; a larger payload goes into a sealed memfd.
func credentialFD(payload []byte) (int, error) {
	if fd, err := socketFD(payload); err == nil || !errors.Is(err, unix.EAGAIN) {
		return fd, err
	}
	return memfdFD(payload)
}

// socketFD writes payload into one end of a socket pair and returns the
// other; EAGAIN when payload does not fit the socket's buffer.
func socketFD(payload []byte) (int, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	w, r := fds[0], fds[1]
	defer unix.Close(w)
	// Nobody reads before the exec: a write that would block means the
	// buffer is full.
	if err := unix.SetNonblock(w, true); err != nil {
		unix.Close(r)
		return -1, err
	}
	for off := 0; off < len(payload); {
		n, err := unix.Write(w, payload[off:])
		if err != nil {
			unix.Close(r)
			return -1, err
		}
		off += n
	}
	if err := inheritable(r); err != nil {
		unix.Close(r)
		return -1, err
	}
	return r, nil
}

// memfdFD returns a sealed memfd holding payload, positioned at its start.
func memfdFD(payload []byte) (int, error) {
	fd, err := unix.MemfdCreate("winx-credentials", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, err
	}
	err = writeAll(fd, payload)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	}
	if err == nil {
		_, err = unix.Seek(fd, 0, 0)
	}
	if err == nil {
		err = inheritable(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// inheritable clears close-on-exec on fd.
func inheritable(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0)
	return err
}

// receiveCredentials reads the handoff on the descriptor numbered fdText,
// bounded by maxCredentialBytes, and closes it. The descriptor must be what
// reexecWith makes: a socket whose peer is this very process (the pid
// survives the exec) or a write-sealed memfd.
func receiveCredentials(fdText string) (credentials, error) {
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return credentials{}, fmt.Errorf("%w: %s=%q is not an inherited descriptor", ErrCredentialHandoff, credentialFDVar, fdText)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return credentials{}, fmt.Errorf("%w: descriptor %d: %w", ErrCredentialHandoff, fd, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFSOCK:
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil || int(cred.Pid) != os.Getpid() {
			return credentials{}, fmt.Errorf("%w: descriptor %d is not this process's socket", ErrCredentialHandoff, fd)
		}
	case unix.S_IFREG:
		seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
		if err != nil || seals&unix.F_SEAL_WRITE == 0 {
			return credentials{}, fmt.Errorf("%w: descriptor %d is not a sealed memfd", ErrCredentialHandoff, fd)
		}
	default:
		return credentials{}, fmt.Errorf("%w: descriptor %d is neither a socket nor a memfd", ErrCredentialHandoff, fd)
	}
	data := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for len(data) <= maxCredentialBytes {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return credentials{}, fmt.Errorf("%w: descriptor %d: %w", ErrCredentialHandoff, fd, err)
		}
		if n == 0 {
			break
		}
		data = append(data, buf[:n]...)
	}
	c, err := parseCredentials(data)
	clear(data)
	clear(buf)
	return c, err
}
