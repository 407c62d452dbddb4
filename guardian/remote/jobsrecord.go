package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"winx/guardian"
)

// The jobs record of a guardian lives beside its socket and its Record, in
// the private socket directory, rather than in the state directory: it is
// found by the same directory listing as the sockets (`winx jobs` needs no
// map from session keys to state files), it has the socket directory's
// privacy (0700, the user's), and its name is the socket's, so the next
// guardian of the same session key finds it where it takes the socket.
// Unlike the Record, a dead guardian's jobs record outlives CleanupDead: it
// is how the jobs that ran are reported lost. A guardian that ends normally
// (session.close, `winx kill`, `winx prune`) removes it; so does `winx
// prune` for a record no guardian serves any more, and ExpireLost with the
// lost record of its session.

// JobsRecordSuffix ends the name of a jobs record: socket + suffix.
const JobsRecordSuffix = ".jobs.json"

// MaxJobsRecordBytes bounds a jobs record, written or read back. With at
// most 2*guardian.MaxBackground jobs of short commands it is never reached;
// a writer that would pass it drops the oldest jobs.
const MaxJobsRecordBytes = 128 << 10

// JobsRecord is what a guardian writes whenever one of its jobs starts or
// ends: enough to list them after the guardian died.
type JobsRecord struct {
	Key     string         `json:"key"`
	PID     int            `json:"pid"` // the guardian that wrote it
	Written time.Time      `json:"written"`
	Jobs    []guardian.Job `json:"jobs"`
}

// JobsRecordPath is the jobs record of the guardian on socket.
func JobsRecordPath(socket string) string { return socket + JobsRecordSuffix }

// SocketOfJobsRecord is the socket a jobs record path belongs to.
func SocketOfJobsRecord(path string) string { return strings.TrimSuffix(path, JobsRecordSuffix) }

// ErrJobsRecord: a jobs record is over MaxJobsRecordBytes or not JSON.
var ErrJobsRecord = errors.New("remote: bad jobs record")

// ReadJobsRecord reads the jobs record of the guardian on socket; a missing
// one gives an error wrapping fs.ErrNotExist.
func ReadJobsRecord(socket string) (JobsRecord, error) {
	b, err := readBounded(JobsRecordPath(socket), MaxJobsRecordBytes)
	if over := (*overLimitError)(nil); errors.As(err, &over) {
		return JobsRecord{}, fmt.Errorf("%w: %v", ErrJobsRecord, err)
	}
	if err != nil {
		return JobsRecord{}, err
	}
	var r JobsRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return JobsRecord{}, fmt.Errorf("%w: %s: %v", ErrJobsRecord, JobsRecordPath(socket), err)
	}
	return r, nil
}

// LostJobs returns the jobs of a record whose guardian is gone: those that
// were running are lost.
func (r JobsRecord) LostJobs() []guardian.Job {
	jobs := make([]guardian.Job, len(r.Jobs))
	for i, j := range r.Jobs {
		jobs[i] = j.Lost()
	}
	return jobs
}

// writeJobsRecord replaces the jobs record of socket atomically (a
// private temporary file in the same directory, renamed), dropping
// the oldest jobs while it would pass MaxJobsRecordBytes.
func writeJobsRecord(socket string, r JobsRecord) error {
	var b []byte
	for {
		var err error
		if b, err = json.Marshal(r); err != nil {
			return err
		}
		if len(b) <= MaxJobsRecordBytes || len(r.Jobs) == 0 {
			break
		}
		r.Jobs = r.Jobs[1:]
	}
	if err := replaceFile(JobsRecordPath(socket), b); err != nil {
		return fmt.Errorf("remote: write the jobs record: %w", err)
	}
	return nil
}

// RemoveJobsRecord removes the jobs record of socket, if any.
func RemoveJobsRecord(socket string) error {
	if err := os.Remove(JobsRecordPath(socket)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// priorJobs are the jobs the dead previous guardian of key on socket
// recorded; nil when there is no record, or it is another key's.
func priorJobs(socket, key string) ([]guardian.Job, error) {
	r, err := ReadJobsRecord(socket)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if r.Key != key {
		return nil, nil
	}
	return r.LostJobs(), nil
}

// jobsRecorder rewrites a guardian's jobs record whenever a job starts or
// ends (guardian.Options.OnJobsChange).
type jobsRecorder struct {
	socket, key string
	pid         int
	logger      *slog.Logger

	mu sync.Mutex // serialises writes, so the last written is the newest
	// sess is set once the session started, before it serves; nil before.
	sess *guardian.Shell
	// stopped: the guardian is ending normally and removed the record;
	// nothing writes it again.
	stopped bool
}

// changed writes the record with the session's jobs now.
func (j *jobsRecorder) changed() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopped || j.sess == nil {
		return
	}
	jobs, err := j.sess.Jobs(context.Background()) // it does not block
	if err == nil {
		err = writeJobsRecord(j.socket, JobsRecord{Key: j.key, PID: j.pid, Written: time.Now(), Jobs: jobs})
	}
	if err != nil {
		j.logger.Warn("jobs record", "err", err)
	}
}

// start begins recording sess's jobs and writes the first record (with the
// previous guardian's jobs, now lost).
func (j *jobsRecorder) start(sess *guardian.Shell) {
	j.mu.Lock()
	j.sess = sess
	j.mu.Unlock()
	j.changed()
}

// stop removes the record and writes it no more: the guardian ends
// normally, ending its jobs itself. A guardian whose shell never started
// leaves the previous guardian's record for the next one.
func (j *jobsRecorder) stop() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stopped = true
	if j.sess == nil {
		return
	}
	if err := RemoveJobsRecord(j.socket); err != nil {
		j.logger.Warn("jobs record", "err", err)
	}
}
