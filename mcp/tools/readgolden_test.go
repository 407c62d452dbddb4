package tools

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateRead = flag.Bool("update-read", false, "rewrite testdata/readfiles/*.golden with the answers the code gives now")

// readGoldenFiles are the files of the golden answers: ordinary code, a
// file of secrets (each must leave as a placeholder), CRLF line ends with
// invalid UTF-8 and characters JSON escapes, and a text long enough to be
// truncated by its budget.
func readGoldenFiles() map[string]string {
	var code strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&code, "\tx%d := compute(%d) // a <typical> line & \"code\"\n", i, i)
	}
	secrets := strings.Join([]string{
		"aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEYabcd",
		"token: " + testGitHubToken,
		"remote = " + testURL,
		"Authorization: Bearer abcdefghij0123456789" + "klmnopqrstuvwxyz",
		"jwt=eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"openai sk-proj" + "-abcdefghijklmnop0123456789",
		"slack xoxb-" + "1234567890-abcdefghij",
		"-----BEGIN RSA " + "PRIVATE KEY-----",
		"MIIEowIBAAKCAQEAsecretsecretsecret",
		"-----END RSA " + "PRIVATE KEY-----",
		"an ordinary line after the key",
		"",
	}, "\n")
	crlf := "first line\r\nbad \xff\xfe bytes\r\n\u2028 separators \u2029 and <tags> & \"quotes\"\r\n\ttab\x01control\r\nno final newline"
	var long strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&long, "line %d of a long text file with some words in it\n", i)
	}
	return map[string]string{"code.go": code.String(), "secrets.env": secrets, "crlf.txt": crlf, "long.txt": long.String()}
}

// TestReadFilesGolden pins the exact bytes of ReadFiles answers (the text
// block and the structured data, escaping included): speed work on the
// read path must not change what a client receives. Run with -update-read
// to rewrite the golden files after an intended change.
func TestReadFilesGolden(t *testing.T) {
	e := newBashEnv(t, "")
	for name, content := range readGoldenFiles() {
		writeFile(t, filepath.Join(e.root, name), content)
	}
	cases := []struct {
		name  string
		paths []string
	}{
		{"code", []string{"code.go"}},
		{"code-range", []string{"code.go:10-20"}},
		{"secrets", []string{"secrets.env"}},
		{"crlf", []string{"crlf.txt"}},
		{"long", []string{"long.txt"}},
		{"several", []string{"secrets.env:3-5", "missing.txt", "crlf.txt:2-", "code.go:-3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			e.client.Handler.ServeHTTP(rec, readHTTPRequest(readRequestBody(t, e, c.paths...)))
			if rec.Code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.Bytes())
			}
			got := bytes.ReplaceAll(rec.Body.Bytes(), []byte(e.root), []byte("<root>"))
			for _, secret := range []string{testGitHubToken, testURLPass, "IOSFODNN7EXAMPLE", "bPxRfiCYEXAMPLEKEY", "klmnopqrstuvwxyz", "dozjgNryP4J3", "MIIEowIBAAKCAQEA", "0123456789-abcdefghij"} {
				if bytes.Contains(got, []byte(secret)) {
					t.Errorf("the answer holds the secret %q", secret)
				}
			}
			path := filepath.Join("testdata", "readfiles", c.name+".golden")
			if *updateRead {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-read to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the answer changed:\n got %s\nwant %s", got, want)
			}
		})
	}
}
