package redact

import (
	"slices"
	"strings"
	"testing"
)

// Fake secrets, built from parts so that the source holds nothing a secret
// scanner would flag. Each has the shape of the real thing.
var (
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSTSKeyID  = "ASIA" + "Y34FZKBOKMUTVV7A"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY" // 40
	ghToken      = "ghp_" + strings.Repeat("a1B2", 9)              // 36 after the prefix
	ghPAT        = "github_pat_" + "11ABCDEFG0" + "abcdefghijkl_" + strings.Repeat("Z9y8", 15)
	anthropicKey = "sk-ant-api03-" + strings.Repeat("Ab3_dE-fG9", 9) + "AA"
	openAIKey    = "sk-" + strings.Repeat("T3BlbkFJ", 6)
	openAIProj   = "sk-proj-" + strings.Repeat("x_Y-z0", 12)
	googleKey    = "AIza" + "SyA-1234567890abcdefghijklmnopqrstu"
	slackToken   = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	stripeLive   = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	stripeRK     = "rk_live_" + "51H8s2pLkNcQ7z0YbXaWvUt9"
	stripeTest   = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"
	gitlabPAT    = "glpat-" + strings.Repeat("aB3-_", 4)                     // 20 after the prefix
	gitlabRoute  = "glpat-" + strings.Repeat("Xy9_z", 6) + ".01" + "0abc123" // routable: 30, then its tail
	npmToken     = "npm_" + strings.Repeat("aB3d", 9)                        // 36
	pypiToken    = "pypi-AgE" + "IcHlwaS5vcmc" + strings.Repeat("CJDU5ZDk3-_x", 10)
	hfToken      = "hf_" + strings.Repeat("abcDEFghiJKLmnoPQR", 2)[:34]
	sendgridKey  = "SG." + strings.Repeat("aB3-_", 5)[:22] + "." + strings.Repeat("Zy9_x", 9)[:43]
	doToken      = "dop_v1_" + strings.Repeat("0123456789abcdef", 4) // 64
	// The RFC 7519 example token.
	jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	bearer = "mF_9.B5f-4.1JqM" + "0123456789abcdef~+/" // an RFC 6750 b64token
)

// pem returns a PEM block with the given label and a short body.
func pem(label string) string {
	return "-----BEGIN " + label + "-----\n" +
		"MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE/Wm/Rr500P\n" +
		"-----END " + label + "-----"
}

func r(rule string) string { return "[REDACTED:" + rule + "]" }

type redactCase struct {
	name  string
	in    string
	want  string
	count int
}

// redactCases covers each rule, positive and negative, and the interplay of
// rules. The fuzz target is seeded from it.
var redactCases = []redactCase{
	// private-key
	{"pem rsa", "key:\n" + pem("RSA PRIVATE KEY") + "\nafter", "key:\n" + r("private-key") + "\nafter", 1},
	{"pem pkcs8", pem("PRIVATE KEY"), r("private-key"), 1},
	{"pem openssh", pem("OPENSSH PRIVATE KEY") + "\n", r("private-key") + "\n", 1},
	{"pem ec", "x " + pem("EC PRIVATE KEY") + " y", "x " + r("private-key") + " y", 1},
	{"pem encrypted", pem("ENCRYPTED PRIVATE KEY"), r("private-key"), 1},
	{"pem pgp", pem("PGP PRIVATE KEY BLOCK"), r("private-key"), 1},
	{"pem json escaped", `{"key":"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"}`, `{"key":"` + r("private-key") + `\n"}`, 1},
	{"pem two blocks", pem("RSA PRIVATE KEY") + "\nmid\n" + pem("EC PRIVATE KEY"), r("private-key") + "\nmid\n" + r("private-key"), 2},
	{"pem unterminated", "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2\nZ1BjP5CE", "before\n" + r("private-key"), 1},
	{"pem mismatched end", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END EC PRIVATE KEY-----\ntail", r("private-key"), 1},
	{"pem header only", "-----BEGIN OPENSSH PRIVATE KEY-----", r("private-key"), 1},
	{"pem certificate", pem("CERTIFICATE"), pem("CERTIFICATE"), 0},
	{"pem public key", pem("PUBLIC KEY"), pem("PUBLIC KEY"), 0},
	{"pem lowercase label", "-----BEGIN private key-----\nabc", "-----BEGIN private key-----\nabc", 0},
	{"pem prose", "a line starting -----BEGIN is not a key", "a line starting -----BEGIN is not a key", 0},

	// aws-access-key-id
	{"aws key id", "id " + awsKeyID + " end", "id " + r("aws-access-key-id") + " end", 1},
	{"aws sts key id", `"AccessKeyId": "` + awsSTSKeyID + `"`, `"AccessKeyId": "` + r("aws-access-key-id") + `"`, 1},
	{"aws key id env", "AWS_ACCESS_KEY_ID=" + awsKeyID, "AWS_ACCESS_KEY_ID=" + r("aws-access-key-id"), 1},
	{"aws key id too long", awsKeyID + "X", awsKeyID + "X", 0},
	{"aws key id glued", "x" + awsKeyID, "x" + awsKeyID, 0},
	{"aws key id too short", "AKIA1234", "AKIA1234", 0},
	{"aws key id lowercase", strings.ToLower(awsKeyID), strings.ToLower(awsKeyID), 0},

	// aws-secret-access-key
	{"aws secret ini", "aws_secret_access_key = " + awsSecret, "aws_secret_access_key = " + r("aws-secret-access-key"), 1},
	{"aws secret env", `export AWS_SECRET_ACCESS_KEY="` + awsSecret + `"`, `export AWS_SECRET_ACCESS_KEY="` + r("aws-secret-access-key") + `"`, 1},
	{"aws secret sts json", `"SecretAccessKey": "` + awsSecret + `",`, `"SecretAccessKey": "` + r("aws-secret-access-key") + `",`, 1},
	{"aws secret yaml", "secret_access_key: " + awsSecret + "\n", "secret_access_key: " + r("aws-secret-access-key") + "\n", 1},
	{"aws secret configure prompt", "AWS Secret Access Key [None]: " + awsSecret, "AWS Secret Access Key [None]: " + r("aws-secret-access-key"), 1},
	{"aws secret placeholder value", "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY", "aws_secret_access_key = YOUR_SECRET_ACCESS_KEY", 0},
	{"aws secret too short", "aws_secret_access_key=" + awsSecret[:39], "aws_secret_access_key=" + awsSecret[:39], 0},
	{"aws secret without name", "value " + awsSecret, "value " + awsSecret, 0},
	{"aws secret prose", "the secret access key is rotated daily", "the secret access key is rotated daily", 0},
	{"aws secret variable", "aws_secret_access_key=$AWS_SECRET", "aws_secret_access_key=$AWS_SECRET", 0},

	// github-token
	{"github ghp", "token " + ghToken, "token " + r("github-token"), 1},
	{"github gho ghu ghs ghr", "gho_" + ghToken[4:] + " ghu_" + ghToken[4:] + " ghs_" + ghToken[4:] + " ghr_" + ghToken[4:],
		strings.Repeat(r("github-token")+" ", 3) + r("github-token"), 4},
	{"github fine-grained pat", "GH_TOKEN=" + ghPAT, "GH_TOKEN=" + r("github-token"), 1},
	{"github token in url", "https://x-access-token:" + "ghs_" + ghToken[4:] + "@github.com/o/r.git", "https://x-access-token:" + r("github-token") + "@github.com/o/r.git", 1},
	{"github too short", ghToken[:len(ghToken)-1], ghToken[:len(ghToken)-1], 0},
	{"github other letter", "ghx_" + ghToken[4:], "ghx_" + ghToken[4:], 0},
	{"github glued", "a" + ghToken, "a" + r("github-token"), 1},
	{"github back to back", ghToken + ghToken, r("github-token"), 1},
	{"github prose", "the ghp_ prefix marks personal tokens", "the ghp_ prefix marks personal tokens", 0},

	// anthropic-api-key
	{"anthropic", "ANTHROPIC_API_KEY=" + anthropicKey, "ANTHROPIC_API_KEY=" + r("anthropic-api-key"), 1},
	{"anthropic wins over openai", anthropicKey + " " + openAIKey, r("anthropic-api-key") + " " + r("openai-api-key"), 2},
	{"anthropic too short", "sk-ant-api03-x", "sk-ant-api03-x", 0},

	// openai-api-key
	{"openai legacy", "OPENAI_API_KEY=" + openAIKey, "OPENAI_API_KEY=" + r("openai-api-key"), 1},
	{"openai project", `{"key": "` + openAIProj + `"}`, `{"key": "` + r("openai-api-key") + `"}`, 1},
	{"openai sk-learn", "pip install sk-learn; import sklearn", "pip install sk-learn; import sklearn", 0},
	{"openai hyphenated prose", "an sk-learn-compatible-transformers-pipeline", "an sk-learn-compatible-transformers-pipeline", 0},
	{"openai glued", "task-0123456789abcdefghijklmnop", "task-0123456789abcdefghijklmnop", 0},
	{"openai too short", "sk-abc123", "sk-abc123", 0},

	// google-api-key
	{"google", "key=" + googleKey + "&q=1", "key=" + r("google-api-key") + "&q=1", 1},
	{"google too short", googleKey[:38], googleKey[:38], 0},
	{"google too long", googleKey + "x", googleKey + "x", 0},
	{"google glued", "x" + googleKey, "x" + googleKey, 0},

	// slack-token
	{"slack bot", "SLACK_BOT_TOKEN=" + slackToken, "SLACK_BOT_TOKEN=" + r("slack-token"), 1},
	{"slack user", "xoxp-" + slackToken[5:], r("slack-token"), 1},
	{"slack no digit", "xoxb-abcdefghijklmnop", "xoxb-abcdefghijklmnop", 0},
	{"slack other letter", "xoxo-" + slackToken[5:], "xoxo-" + slackToken[5:], 0},
	{"slack too short", "xoxb-12345", "xoxb-12345", 0},

	// stripe-key
	{"stripe live", "Stripe.api_key = '" + stripeLive + "'", "Stripe.api_key = '" + r("stripe-key") + "'", 1},
	{"stripe restricted", stripeRK, r("stripe-key"), 1},
	{"stripe test", stripeTest, r("stripe-key"), 1},
	{"stripe publishable", "pk_live_" + stripeLive[8:], "pk_live_" + stripeLive[8:], 0},
	{"stripe too short", "sk_live_abc", "sk_live_abc", 0},

	// gitlab-token
	{"gitlab pat", "GITLAB_TOKEN=" + gitlabPAT, "GITLAB_TOKEN=" + r("gitlab-token"), 1},
	{"gitlab routable", "PRIVATE-TOKEN: " + gitlabRoute, "PRIVATE-TOKEN: " + r("gitlab-token") + gitlabRoute[len(gitlabRoute)-len(".010abc123"):], 1},
	{"gitlab too short", gitlabPAT[:len(gitlabPAT)-1], gitlabPAT[:len(gitlabPAT)-1], 0},
	{"gitlab glued", "x" + gitlabPAT, "x" + gitlabPAT, 0},
	{"gitlab other kind", "glptt-" + gitlabPAT[6:], "glptt-" + gitlabPAT[6:], 0},

	// npm-token
	{"npm", "//registry.npmjs.org/:_authToken=" + npmToken + "\n", "//registry.npmjs.org/:_authToken=" + r("npm-token") + "\n", 1},
	{"npm too short", npmToken[:len(npmToken)-1], npmToken[:len(npmToken)-1], 0},
	{"npm too long", npmToken + "x", npmToken + "x", 0},
	{"npm glued", "x" + npmToken, "x" + npmToken, 0},

	// pypi-token
	{"pypi", "password = " + pypiToken + "\n", "password = " + r("pypi-token") + "\n", 1},
	{"pypi too short", pypiToken[:len("pypi-AgE")+49], pypiToken[:len("pypi-AgE")+49], 0},
	{"pypi not a macaroon", "pypi-" + pypiToken[len("pypi-AgE"):], "pypi-" + pypiToken[len("pypi-AgE"):], 0},
	{"pypi glued", "x" + pypiToken, "x" + pypiToken, 0},

	// huggingface-token
	{"huggingface", "HF_TOKEN=" + hfToken + " ", "HF_TOKEN=" + r("huggingface-token") + " ", 1},
	{"huggingface too short", hfToken[:len(hfToken)-1], hfToken[:len(hfToken)-1], 0},
	{"huggingface identifier", "use_hf_hub_download_for_models", "use_hf_hub_download_for_models", 0},
	{"huggingface glued", "x" + hfToken, "x" + hfToken, 0},

	// sendgrid-api-key
	{"sendgrid", `SENDGRID_API_KEY="` + sendgridKey + `"`, `SENDGRID_API_KEY="` + r("sendgrid-api-key") + `"`, 1},
	{"sendgrid short second part", sendgridKey[:len(sendgridKey)-1], sendgridKey[:len(sendgridKey)-1], 0},
	{"sendgrid long second part", sendgridKey + "_", sendgridKey + "_", 0},
	{"sendgrid glued", "MSG." + sendgridKey[3:], "MSG." + sendgridKey[3:], 0},
	{"sendgrid prose", "SG.append(x) and SG.Count", "SG.append(x) and SG.Count", 0},

	// digitalocean-token
	{"digitalocean", "DIGITALOCEAN_TOKEN=" + doToken, "DIGITALOCEAN_TOKEN=" + r("digitalocean-token"), 1},
	{"digitalocean oauth and refresh", "doo_v1_" + doToken[7:] + " dor_v1_" + doToken[7:], r("digitalocean-token") + " " + r("digitalocean-token"), 2},
	{"digitalocean upper-case hex", "dop_v1_" + strings.ToUpper(doToken[7:]), "dop_v1_" + strings.ToUpper(doToken[7:]), 0},
	{"digitalocean too short", doToken[:len(doToken)-1], doToken[:len(doToken)-1], 0},
	{"digitalocean glued", "x" + doToken, "x" + doToken, 0},

	// jwt
	{"jwt", "token: " + jwt + "\n", "token: " + r("jwt") + "\n", 1},
	{"jwt in query", "?id_token=" + jwt + "&x=1", "?id_token=" + r("jwt") + "&x=1", 1},
	{"jwt bearer names jwt", "Authorization: Bearer " + jwt, "Authorization: Bearer " + r("jwt"), 1},
	{"jwt two segments", strings.Join(strings.Split(jwt, ".")[:2], "."), strings.Join(strings.Split(jwt, ".")[:2], "."), 0},
	{"jwt short segments", "eyJhbGciOiJIUzI1NiJ9.e30.abc", "eyJhbGciOiJIUzI1NiJ9.e30.abc", 0},
	{"jwt glued", "x" + jwt, "x" + jwt, 0},
	{"jwt header alone", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", 0},

	// url-credentials
	{"url", "git clone https://user:hunter2@example.com/repo", "git clone https://user:" + r("url-credentials") + "@example.com/repo", 1},
	{"url postgres", "DATABASE_URL=postgres://app:s3cr%40t@db:5432/app?sslmode=require", "DATABASE_URL=postgres://app:" + r("url-credentials") + "@db:5432/app?sslmode=require", 1},
	{"url empty user", "redis://:p4ss@cache:6379/0", "redis://:" + r("url-credentials") + "@cache:6379/0", 1},
	{"url unencoded at", "mysql://root:p@ss@localhost/db", "mysql://root:" + r("url-credentials") + "@localhost/db", 1},
	{"url quoted", `"amqp://guest:guest@rabbit:5672","mail@example.com"`, `"amqp://guest:` + r("url-credentials") + `@rabbit:5672","mail@example.com"`, 1},
	{"url no password", "ssh://git@github.com:22/org/repo.git", "ssh://git@github.com:22/org/repo.git", 0},
	{"url user only", "https://user@example.com/", "https://user@example.com/", 0},
	{"url port", "http://localhost:8080/path?a=b@c", "http://localhost:8080/path?a=b@c", 0},
	{"url ipv6", "http://[::1]:8080/", "http://[::1]:8080/", 0},
	{"url empty password", "https://user:@example.com/", "https://user:@example.com/", 0},
	{"url no scheme", "see ://user:pass@host", "see ://user:pass@host", 0},

	// bearer-token
	{"bearer header", "Authorization: Bearer " + bearer, "Authorization: Bearer " + r("bearer-token"), 1},
	{"bearer lowercase", "authorization: bearer " + bearer + "==\n", "authorization: bearer " + r("bearer-token") + "\n", 1},
	{"bearer curl", `curl -H "Authorization: Bearer ` + bearer + `" https://api`, `curl -H "Authorization: Bearer ` + r("bearer-token") + `" https://api`, 1},
	{"bearer prose", "Bearer tokens are short-lived credentials", "Bearer tokens are short-lived credentials", 0},
	{"bearer variable", "Authorization: Bearer $TOKEN", "Authorization: Bearer $TOKEN", 0},
	{"bearer no digit", "Bearer abcdefghijklmnopqrstuvwxyz", "Bearer abcdefghijklmnopqrstuvwxyz", 0},
	{"bearer short", "Bearer abc123", "Bearer abc123", 0},
	{"bearer glued", "xBearer " + bearer, "xBearer " + bearer, 0},

	// ordinary text
	{"empty", "", "", 0},
	{"git sha", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@b.c>", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@b.c>", 0},
	{"uuid", "id 123e4567-e89b-12d3-a456-426614174000", "id 123e4567-e89b-12d3-a456-426614174000", 0},
	{"base64 of short words", "aGVsbG8gd29ybGQ= c2VjcmV0 cGFzc3dvcmQ=", "aGVsbG8gd29ybGQ= c2VjcmV0 cGFzc3dvcmQ=", 0},
	{"digest", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 0},
	{"go code", "func (s *Server) Serve(ctx context.Context) error { return nil }", "func (s *Server) Serve(ctx context.Context) error { return nil }", 0},
	{"placeholders stay", r("jwt") + " " + r("url-credentials"), r("jwt") + " " + r("url-credentials"), 0},

	// several rules at once
	{"mixed", "id=" + awsKeyID + "\nurl=https://u:pw1@h\n" + pem("RSA PRIVATE KEY") + "\ntok=" + jwt,
		"id=" + r("aws-access-key-id") + "\nurl=https://u:" + r("url-credentials") + "@h\n" + r("private-key") + "\ntok=" + r("jwt"), 4},
	{"key inside unterminated pem", "-----BEGIN PRIVATE KEY-----\n" + awsKeyID + "\n" + jwt, r("private-key"), 1},

	// A secret whose lead starts inside or at the very end of another one.
	{"github lead after a short one", "ghp_" + ghToken, "ghp_" + r("github-token"), 1},
	{"github overlapping", ghToken[:38] + ghToken, r("github-token"), 1},
	{"jwt in a jwt's signature", jwt + "-" + jwt, r("jwt"), 1},
	{"pem glued to pem", pem("RSA PRIVATE KEY") + pem("EC PRIVATE KEY")[len("-----"):], r("private-key"), 1},
	{"bearer at a token's end", "Bearer " + bearer + "/Bearer " + bearer, "Bearer " + r("bearer-token") + " " + r("bearer-token"), 2},
	{"aws name at a value's end", "secret_access_key=" + strings.Repeat("A1", 20) + "secret_access_key=" + awsSecret,
		"secret_access_key=" + r("aws-secret-access-key") + "_access_key=" + r("aws-secret-access-key"), 2},
}

func TestString(t *testing.T) {
	red := New(false)
	for _, tt := range redactCases {
		t.Run(tt.name, func(t *testing.T) {
			got, n := red.String(tt.in)
			if got != tt.want || n != tt.count {
				t.Errorf("String(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.count)
			}
		})
	}
}

func TestStringIsIdempotent(t *testing.T) {
	red := New(false)
	for _, tt := range redactCases {
		once, _ := red.String(tt.in)
		twice, n := red.String(once)
		if twice != once || n != 0 {
			t.Errorf("String(String(%q)) = %q, %d; want %q, 0", tt.in, twice, n, once)
		}
	}
}

func TestDisabled(t *testing.T) {
	red := New(true)
	for _, tt := range redactCases {
		if got, n := red.String(tt.in); got != tt.in || n != 0 {
			t.Errorf("New(true).String(%q) = %q, %d; want the input, 0", tt.in, got, n)
		}
	}
}

func TestNilAndZeroRedactorRedact(t *testing.T) {
	in, want := "id "+awsKeyID, "id "+r("aws-access-key-id")
	var nilRedactor *Redactor
	for name, red := range map[string]*Redactor{"nil": nilRedactor, "zero": {}} {
		if got, n := red.String(in); got != want || n != 1 {
			t.Errorf("%s Redactor: String(%q) = %q, %d; want %q, 1", name, in, got, n, want)
		}
	}
}

func TestRules(t *testing.T) {
	want := []string{
		"private-key", "aws-access-key-id", "aws-secret-access-key", "github-token",
		"anthropic-api-key", "openai-api-key", "google-api-key", "slack-token",
		"stripe-key", "gitlab-token", "npm-token", "pypi-token", "huggingface-token",
		"sendgrid-api-key", "digitalocean-token", "jwt", "url-credentials", "bearer-token",
	}
	got := Rules()
	var names []string
	for _, rule := range got {
		names = append(names, rule.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("Rules() names = %q, want %q", names, want)
	}
	got[0].Name = "changed"
	if Rules()[0].Name != "private-key" {
		t.Error("changing the slice Rules returned changed the rule set")
	}
	// No placeholder is itself a secret.
	for _, name := range want {
		if got, n := New(false).String(" " + r(name) + " "); n != 0 {
			t.Errorf("String(placeholder %q) = %q, %d; want it unchanged", name, got, n)
		}
	}
}

// pathological returns inputs of about n bytes built to make a careless
// scanner quadratic: runs in which every position is a candidate that is
// rejected only at the end of the run.
func pathological(n int) map[string]string {
	rep := func(s string) string { return strings.Repeat(s, n/len(s)+1)[:n] }
	return map[string]string{
		"sk-run":         rep("sk-"),
		"sk-glued":       rep("xsk-"),
		"jwt-dashes":     rep("eyJaaaaaaaaaaaa-"),
		"jwt-dots":       rep("eyJaaaaaaaaaaaa.eyJaaaaaaaaaaaa."),
		"github-run":     "ghp_" + rep("a"),
		"google-run":     rep("AIza-"),
		"aws-run":        rep("AKIA"),
		"pem-begins":     rep("-----BEGIN RSA PRIVATE KEY-"),
		"pem-unclosed":   rep("-----BEGIN PRIVATE KEY-----\n"),
		"url-colons":     rep("a://b:"),
		"url-ats":        "a://b:" + rep("@"),
		"bearer-repeat":  rep("Bearer a-Bearer "),
		"bearer-no-dig":  "Bearer " + rep("a"),
		"secret-assign":  rep("secret_access_key="),
		"secret-words":   rep("SecretAccess"),
		"slack-run":      rep("xoxb-"),
		"hf-run":         "hf_" + rep("a"),
		"sendgrid-runs":  rep("SG." + strings.Repeat("a", 22) + "."),
		"pypi-run":       rep("pypi-AgE"),
		"placeholders":   rep(r("url-credentials")),
		"url-with-holes": rep("x://u:" + r("jwt") + "@"),
	}
}

// TestPathologicalInputs runs each pathological input at 2 MB. A quadratic
// scanner would take minutes here; the linear ones take milliseconds. The
// benchmarks report the speed.
func TestPathologicalInputs(t *testing.T) {
	size := 2 << 20
	if testing.Short() {
		size = 256 << 10
	}
	red := New(false)
	for name, in := range pathological(size) {
		t.Run(name, func(t *testing.T) {
			out, _ := red.String(in)
			if again, n := red.String(out); again != out || n != 0 {
				t.Errorf("redacting %s twice changed it again (%d replacements)", name, n)
			}
		})
	}
}
