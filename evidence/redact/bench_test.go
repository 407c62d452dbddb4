package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSize is the size of every benchmark input: the 10 MB the redactor
// must handle in linear time.
const benchSize = 10 << 20

// logText returns about n bytes of terminal-like output: build logs, git
// output, JSON, UUIDs, hashes and base64, with a secret of some rule every
// secretEvery lines (none when secretEvery is 0).
func logText(n, secretEvery int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	hex := func(k int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, k)
		for i := range b {
			b[i] = digits[rng.IntN(16)]
		}
		return string(b)
	}
	lines := []func() string{
		func() string { return "commit " + hex(40) },
		func() string { return "Author: Jane Doe <jane@example.com>" },
		func() string {
			return fmt.Sprintf("ok  \twinx/pkg%d\t0.%03ds\tcoverage: %d.%d%% of statements", rng.IntN(50), rng.IntN(1000), rng.IntN(100), rng.IntN(10))
		},
		func() string {
			return fmt.Sprintf(`{"id":"%s-%s-%s-%s-%s","status":"running","task":"sk-learn fit"}`, hex(8), hex(4), hex(4), hex(4), hex(12))
		},
		func() string { return "go: downloading github.com/creack/pty v1.1.24 h1:" + hex(43) },
		func() string { return "  image: sha256:" + hex(64) + " aGVsbG8gd29ybGQ= c2VjcmV0" },
		func() string {
			return "The Bearer scheme is described in RFC 6750; see https://example.com:8443/docs?a=b"
		},
		func() string {
			return "\x1b[32mPASS\x1b[0m TestSomething (0.01s) -- task-scheduler risk-free desk-check"
		},
	}
	secrets := []string{
		"AWS_ACCESS_KEY_ID=" + awsKeyID, "aws_secret_access_key = " + awsSecret, "token " + ghToken,
		"key " + anthropicKey, "OPENAI_API_KEY=" + openAIProj, "maps " + googleKey, slackToken,
		stripeLive, "Authorization: Bearer " + jwt, "postgres://app:hunter2@db/app",
		"curl -H 'Authorization: Bearer " + bearer + "'", pem("RSA PRIVATE KEY"),
		"GITLAB_TOKEN=" + gitlabPAT, "//registry.npmjs.org/:_authToken=" + npmToken, "password = " + pypiToken,
		"HF_TOKEN=" + hfToken, "SENDGRID_API_KEY=" + sendgridKey, "DIGITALOCEAN_TOKEN=" + doToken,
	}
	var b strings.Builder
	b.Grow(n + 1024)
	for i := 0; b.Len() < n; i++ {
		if secretEvery > 0 && i%secretEvery == 0 {
			b.WriteString(secrets[rng.IntN(len(secrets))])
		} else {
			b.WriteString(lines[rng.IntN(len(lines))]())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func BenchmarkRedact(b *testing.B) {
	inputs := []struct {
		name string
		in   string
	}{
		{"logs-no-secrets", logText(benchSize, 0)},
		{"logs-secret-every-100-lines", logText(benchSize, 100)},
		{"logs-secret-every-5-lines", logText(benchSize, 5)},
	}
	for name, in := range pathological(benchSize) {
		inputs = append(inputs, struct {
			name string
			in   string
		}{"pathological-" + name, in})
	}
	red := New(false)
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.in)))
			for b.Loop() {
				red.String(in.in)
			}
		})
	}
}
