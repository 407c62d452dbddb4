//go:build !linux

package daemon

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"winx/guardian/remote"
)

// watcher watches nothing where there are no pidfds: a dead guardian is
// cleaned up by the periodic sweep.
type watcher struct {
	exited func(context.Context, watched)
}

type watched struct {
	socket string
	pid    int
	proc   *remote.Process
}

func newWatcher(*slog.Logger) *watcher                 { return &watcher{} }
func (w *watcher) start(context.Context) error         { return nil }
func (w *watcher) loop(context.Context)                {}
func (w *watcher) running() bool                       { return false }
func (w *watcher) watching(string, int) bool           { return false }
func (w *watcher) watchChild(*remote.Process)          {}
func (w *watcher) watchFound(string, int, func() bool) {}
func (w *watcher) killGuardian(string, int, func() bool, time.Duration) error {
	return errors.ErrUnsupported
}

func becomeSubreaper(context.Context) error { return errors.ErrUnsupported }
func killOrphans() int                      { return 0 }
