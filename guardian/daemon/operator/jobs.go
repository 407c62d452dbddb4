package operator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"winx/guardian"
	"winx/guardian/daemon"
	"winx/guardian/remote"
	"winx/guardian/wire"
)

// jobsGlob matches the jobs records in a socket directory (a guardian
// socket's name plus remote.JobsRecordSuffix).
const jobsGlob = "g-*.sock" + remote.JobsRecordSuffix

// sessionJobs is one session's part of `winx jobs`.
type sessionJobs struct {
	key, socket string
	pid         int
	gone        bool   // its guardian died: running jobs are lost
	note        string // why the jobs are not a live answer
	jobs        []guardian.Job
}

// jobs prints every session's background jobs, plain text: those of the
// live guardians (asked), and those a dead guardian recorded (its running
// jobs lost). thread, when not "", keeps the sessions it names (external
// id, workspace or socket file name).
func (op *operator) jobs(ctx context.Context, thread string) error {
	live, bad, err := op.fleet.Discover(ctx)
	if err != nil {
		return err
	}
	var (
		out  []sessionJobs
		errs []error
		seen = map[string]bool{}
	)
	for _, g := range live {
		seen[g.Socket] = true
		if !matches(thread, g.Status.Key, g.Socket) {
			continue
		}
		jobs, err := op.liveJobs(ctx, g.Socket)
		if err != nil {
			errs = append(errs, fmt.Errorf("winx: jobs of %s: %w", filepath.Base(g.Socket), err))
			continue
		}
		out = append(out, sessionJobs{key: g.Status.Key, socket: g.Socket, pid: g.PID, jobs: jobs})
	}
	for _, u := range bad {
		if u.Stale {
			continue // a dead guardian: its record is read below
		}
		seen[u.Socket] = true
		if r, err := remote.ReadJobsRecord(u.Socket); err == nil && matches(thread, r.Key, u.Socket) {
			out = append(out, sessionJobs{key: r.Key, socket: u.Socket, pid: u.PID, jobs: r.Jobs,
				note: "the guardian does not answer; as last recorded"})
		}
	}
	records, err := filepath.Glob(filepath.Join(op.Paths.Dir, jobsGlob))
	if err != nil {
		return err
	}
	slices.Sort(records)
	for _, path := range records {
		socket := remote.SocketOfJobsRecord(path)
		if seen[socket] {
			continue
		}
		if alive, err := wire.Probe(ctx, socket); err == nil && alive {
			continue // a guardian took the socket after the discovery
		}
		r, err := remote.ReadJobsRecord(socket)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if matches(thread, r.Key, socket) {
			out = append(out, sessionJobs{key: r.Key, socket: socket, pid: r.PID, gone: true, jobs: r.LostJobs()})
		}
	}
	if thread != "" && len(out) == 0 && len(errs) == 0 {
		// As attach and kill say: a name that matches nothing is a
		// mistake, not a session without jobs.
		return fmt.Errorf("winx: no session matches %q (see `winx list`)", thread)
	}
	op.printJobs(out, time.Now())
	return errors.Join(errs...)
}

// matches reports whether thread (a session's external id, workspace or
// socket file name; "" for all) names the session of key on socket.
func matches(thread, key, socket string) bool {
	if thread == "" {
		return true
	}
	k, _ := daemon.ParseSessionKey(key)
	return thread == k.ExternalID || thread == k.Workspace || thread == filepath.Base(socket)
}

// liveJobs asks the guardian on socket for its jobs; the look does not
// count as activity.
func (op *operator) liveJobs(ctx context.Context, socket string) ([]guardian.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, daemon.DefaultProbeTimeout)
	defer cancel()
	c, err := wire.Dial(ctx, socket, op.hello)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if !c.Peer().Has(remote.MethodJobs) {
		return nil, fmt.Errorf("%w: %s (a guardian of an older build)", remote.ErrUnsupported, remote.MethodJobs)
	}
	var res remote.JobsResult
	if err := c.Call(ctx, remote.MethodJobs, struct{}{}, &res); err != nil {
		return nil, err
	}
	return res.Jobs, nil
}

// printJobs writes one block per session with jobs: a header naming the
// session and its guardian, then a table.
func (op *operator) printJobs(sessions []sessionJobs, now time.Time) {
	printed := false
	for _, s := range sessions {
		if len(s.jobs) == 0 {
			continue
		}
		if printed {
			fmt.Fprintln(op.Stdout)
		}
		printed = true
		k, _ := daemon.ParseSessionKey(s.key)
		state := fmt.Sprintf("guardian pid %d", s.pid)
		switch {
		case s.gone:
			state = fmt.Sprintf("guardian pid %d is gone: jobs it ran are lost, and their output with it", s.pid)
		case s.note != "":
			state += ", " + s.note
		}
		fmt.Fprint(op.Stdout, op.redact(fmt.Sprintf("# %s %s (%s; %s)\n", k.ExternalID, k.Workspace, filepath.Base(s.socket), state)))
		tw := tabwriter.NewWriter(op.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, guardian.JobTableHeader)
		for _, j := range s.jobs {
			j.Command = op.redact(j.Command)
			fmt.Fprintln(tw, guardian.JobRow(j, now))
		}
		tw.Flush()
	}
	if !printed {
		fmt.Fprintln(op.Stdout, "no background jobs")
	}
}

// pruneJobRecords removes the jobs records no guardian serves any more
// (its socket is gone): `winx jobs` reported their lost jobs until now. The
// jobs record of a lost session stays with its lost record until that
// expires (remote.ExpireLost).
func (op *operator) pruneJobRecords() error {
	records, err := filepath.Glob(filepath.Join(op.Paths.Dir, jobsGlob))
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range records {
		socket := remote.SocketOfJobsRecord(path)
		if _, err := os.Lstat(socket); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := os.Lstat(remote.LostRecordPath(socket)); err == nil {
			continue
		}
		if err := remote.RemoveJobsRecord(socket); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(op.Stdout, "removed the jobs record of the dead guardian %s\n", filepath.Base(socket))
	}
	return errors.Join(errs...)
}
