//go:build !linux

package wire

// The admission tests run real processes on Linux only (admit_linux_test.go).
const admitChildEnv = "WINX_WIRE_TEST_ADMIT"

func admitChild(string) int { return 1 }
