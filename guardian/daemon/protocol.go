package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"winx/guardian"
	"winx/guardian/remote"
	"winx/jsonrpc"
)

// Methods winxd serves after the wire hello.
const (
	MethodEnsure   = "daemon.ensure"   // EnsureParams → EnsureResult
	MethodList     = "daemon.list"     // {} → ListResult
	MethodShutdown = "daemon.shutdown" // ShutdownParams → {}; guardians keep running
)

// Wire error codes of winxd (the range above guardian/remote's -32010).
const (
	CodeQuota   = -32020 // data: quotaData
	CodeSpawn   = -32021 // the guardian did not start
	CodeRequest = -32022 // the request is malformed
	// CodeUnresponsive: the key's guardian accepts connections but does
	// not answer (stopped, hung); data: unresponsiveData.
	CodeUnresponsive = -32023
)

type unresponsiveData struct {
	Socket  string `json:"socket"`
	Method  string `json:"method"`
	AfterMS int64  `json:"after_ms"`
}

// Limits of a request.
const (
	// MaxKeyBytes bounds a session key.
	MaxKeyBytes = 8 << 10
	// MaxEnvEntries bounds the environment a guardian is started with.
	MaxEnvEntries = 4096
)

// ErrSpawnFailed: winxd could not start the guardian.
var ErrSpawnFailed = errors.New("daemon: guardian did not start")

// EnsureParams ask for the guardian of Key, started in Dir when none runs.
// The options are the adapter's runtime options (WINX_SHELL,
// WINX_NO_REDACT, WINX_NO_COMPRESS), so a guardian is configured exactly as
// the embedded runtime would configure the session.
type EnsureParams struct {
	Key        string `json:"key"`
	Dir        string `json:"dir"`       // the shell's first working directory
	Workspace  string `json:"workspace"` // root for .winx/scratch
	Shell      string `json:"shell,omitempty"`
	NoRedact   bool   `json:"no_redact,omitempty"`
	NoCompress bool   `json:"no_compress,omitempty"`
	// Sandbox confines the guardian's shells with Landlock (WINX_SANDBOX=1;
	// the policy comes from the WINX_SANDBOX_* variables in Env). It must
	// agree with the key (SessionKey.IsSandboxed; a key of another layout
	// is never sandboxed), so a confined and an unconfined session never
	// share a guardian and no request lowers a session's sandbox.
	Sandbox bool `json:"sandbox,omitempty"`
	// Env is the shell's environment: the adapter's own minus its
	// credentials, plus the session's variables. It travels only over the
	// private socket and is never logged.
	Env []string `json:"env,omitempty"`
}

func (p *EnsureParams) validate() error {
	switch {
	case p.Key == "" || len(p.Key) > MaxKeyBytes:
		return fmt.Errorf("daemon: a key of 1 to %d bytes is required", MaxKeyBytes)
	case !filepath.IsAbs(p.Dir):
		return fmt.Errorf("daemon: dir must be absolute")
	case p.Workspace != "" && !filepath.IsAbs(p.Workspace):
		return fmt.Errorf("daemon: workspace must be absolute")
	case !validShell(p.Shell):
		return fmt.Errorf("daemon: unknown shell %q", p.Shell)
	case len(p.Env) > MaxEnvEntries:
		return fmt.Errorf("daemon: more than %d environment entries", MaxEnvEntries)
	case p.Sandbox != keySandboxed(p.Key):
		// The sandbox of a session is fixed by the adapter's
		// configuration through the key: no request may start the
		// guardian of a confined session's key unconfined, or the other
		// way round.
		return fmt.Errorf("daemon: the sandbox flag (%v) disagrees with the key's", p.Sandbox)
	}
	return nil
}

// keySandboxed reports whether key is a confined session's key.
func keySandboxed(key string) bool {
	k, ok := ParseSessionKey(key)
	return ok && k.IsSandboxed()
}

// EnsureResult is the guardian serving the key. Reclaimed lists the
// never-used idle guardians ended to make room under the quota.
type EnsureResult struct {
	Guardian  Guardian   `json:"guardian"`
	Spawned   bool       `json:"spawned"`
	Reclaimed []Guardian `json:"reclaimed,omitempty"`
}

// ListResult is what discovery found.
type ListResult struct {
	Guardians   []Guardian    `json:"guardians"`
	Unreachable []Unreachable `json:"unreachable,omitempty"`
}

// ShutdownParams ask winxd to exit; the reason is recorded for doctor.
type ShutdownParams struct {
	Reason string `json:"reason,omitempty"`
}

type quotaData struct {
	Max   int `json:"max"`
	Live  int `json:"live"`
	Share int `json:"share,omitempty"`
	Held  int `json:"held,omitempty"`
}

// toWireError gives a typed error its wire form.
func toWireError(err error) error {
	var (
		qe *QuotaError
		ue *remote.UnresponsiveError
	)
	switch {
	case errors.As(err, &ue):
		return jsonrpc.NewErrorWithData(CodeUnresponsive, ue.Error(), unresponsiveData{Socket: ue.Socket, Method: ue.Method, AfterMS: ue.After.Milliseconds()})
	case errors.As(err, &qe):
		return jsonrpc.NewErrorWithData(CodeQuota, qe.Error(), quotaData{Max: qe.Max, Live: qe.Live, Share: qe.Share, Held: qe.Held})
	case errors.Is(err, ErrSpawnFailed):
		return jsonrpc.NewError(CodeSpawn, err.Error())
	}
	return err
}

// fromWireError turns a wire error back into the typed error.
func fromWireError(err error) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return err
	}
	switch we.Code {
	case CodeQuota:
		var d quotaData
		_ = json.Unmarshal(we.Data, &d)
		return &QuotaError{Max: d.Max, Live: d.Live, Share: d.Share, Held: d.Held}
	case CodeUnresponsive:
		var d unresponsiveData
		_ = json.Unmarshal(we.Data, &d)
		return &remote.UnresponsiveError{Socket: d.Socket, Method: d.Method, After: time.Duration(d.AfterMS) * time.Millisecond}
	case CodeSpawn:
		return fmt.Errorf("%w: %s", ErrSpawnFailed, strings.TrimPrefix(we.Message, ErrSpawnFailed.Error()+": "))
	}
	return err
}

// validShell accepts what guardian.ShellKind accepts.
func validShell(s string) bool {
	_, ok := guardian.ShellKind(s)
	return ok
}
