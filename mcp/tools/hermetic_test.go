package tools

import (
	"testing"

	"winx/guardian/wire/hermetic"
)

// TestMain keeps every test here away from the user's winx (package
// hermetic).
func TestMain(m *testing.M) { hermetic.Main(m) }
