package tools

import (
	"fmt"
	"testing"

	"winx/guardian"
	"winx/mcp"
)

// A guardian that does not answer in time is its own error code, not an
// execution failure.
func TestUnresponsiveGuardianEnvelope(t *testing.T) {
	err := fmt.Errorf("remote: guardian on /s did not answer session.run within 10s: %w", guardian.ErrUnresponsive)
	env := errorEnvelope(BashCommandTool, err)
	if env.ErrorCode != codeGuardianUnresponsive || env.Status != mcp.StatusFailed || !env.Retryable {
		t.Errorf("errorEnvelope(unresponsive) = %+v, want %s, failed, retryable", env, codeGuardianUnresponsive)
	}
}
