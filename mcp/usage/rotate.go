package usage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stamp layouts of rotated files, in UTC: <path>.20260301 for a day,
// <path>.20260301T14 for an hour, with "-N" appended when the name was taken.
const (
	dayLayout  = "20060102"
	hourLayout = "20060102T15"
)

// maxCollisions bounds the "-N" suffixes tried for one rotated name.
const maxCollisions = 1000

// periodStart returns the UTC start of the rotation period holding t, and the
// zero time for RotateNever.
func periodStart(t time.Time, rotation string) time.Time {
	t = t.UTC()
	switch rotation {
	case RotateHourly:
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, time.UTC)
	case RotateDaily:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case RotateNever:
		return time.Time{}
	}
	panic("usage: rotation " + strconv.Quote(rotation) + " was not validated by Open")
}

func stamp(period time.Time, rotation string) string {
	if rotation == RotateHourly {
		return period.Format(hourLayout)
	}
	return period.Format(dayLayout)
}

// moveAside renames path to path.<stamp>, or path.<stamp>-N if taken. It
// links then unlinks so an existing rotated file is never overwritten.
func moveAside(path, stamp string) error {
	for n := 0; n < maxCollisions; n++ {
		target := path + "." + stamp
		if n > 0 {
			target += "-" + strconv.Itoa(n)
		}
		err := os.Link(path, target)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("usage: rotate: %w", err)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("usage: rotate: %w", err)
		}
		return nil
	}
	return fmt.Errorf("usage: rotate: %d files named %s.%s-N already exist", maxCollisions, path, stamp)
}

// rotated is one rotated file of a log.
type rotated struct {
	path  string
	start time.Time     // start of the period it holds
	span  time.Duration // length of that period
	seq   int           // the "-N" suffix, 0 without one
}

// rotatedFiles lists the rotated files of the log at path, oldest first.
// Names that do not parse as stamps are not ours and are left alone.
func rotatedFiles(path string) ([]rotated, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	var out []rotated
	for _, e := range ents {
		suffix, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		r, ok := parseStamp(suffix)
		if !ok {
			continue
		}
		r.path = filepath.Join(dir, e.Name())
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b rotated) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	return out, nil
}

func parseStamp(s string) (rotated, bool) {
	var r rotated
	if i := strings.IndexByte(s, '-'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n <= 0 || strconv.Itoa(n) != s[i+1:] {
			return r, false
		}
		r.seq, s = n, s[:i]
	}
	var err error
	switch len(s) {
	case len(dayLayout):
		r.start, err = time.Parse(dayLayout, s)
		r.span = 24 * time.Hour
	case len(hourLayout):
		r.start, err = time.Parse(hourLayout, s)
		r.span = time.Hour
	default:
		return r, false
	}
	return r, err == nil
}

// prune deletes rotated files whose whole period ended before now minus the
// retention.
func (l *Log) prune() error {
	if l.retention == 0 {
		return nil
	}
	files, err := rotatedFiles(l.path)
	if err != nil {
		return err
	}
	cutoff := l.now().Add(-l.retention)
	var errs []error
	for _, r := range files {
		if r.start.Add(r.span).After(cutoff) {
			continue
		}
		if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("usage: retention: %w", err))
		}
	}
	return errors.Join(errs...)
}
