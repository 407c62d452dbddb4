package redact

import "slices"

// Rule is one kind of secret. Its Name appears in the placeholder
// "[REDACTED:<Name>]".
type Rule struct {
	Name string

	matchers []matcher // each finds secrets independently; never modified
}

// Rules returns the rule set in order. When secrets found by two rules start
// at the same byte, the earlier rule names the placeholder.
func Rules() []Rule { return slices.Clone(rules) }

// Minimum lengths that keep the generic shapes off ordinary text.
const (
	minOpenAIBody    = 20 // after "sk-"
	minAnthropicBody = 20 // after "sk-ant-"
	minGitHubBody    = 36 // after "ghp_" and friends; real tokens have exactly 36
	minGitHubPATBody = 22 // after "github_pat_"; real ones have 82
	minSlackBody     = 10 // after "xoxb-" and friends
	minStripeBody    = 16 // after "sk_live_" and friends; real ones have 24 or 99
	minJWTSegment    = 10 // each of the three segments, "eyJ" included
	minBearerToken   = 20 // the b64token after "Bearer ", padding excluded
	minAWSSecret     = 40 // AWS secret access keys have exactly 40
	minGitLabBody    = 20 // after "glpat-"; routable tokens have 27 or more
	minPyPIBody      = 50 // after "pypi-AgE"; real macaroons have well over 100
	minHFBody        = 34 // after "hf_"; real tokens have exactly 34 letters
)

// rules is the rule set. It is built once and never modified; Rules hands
// out copies.
//
// Formats:
//   - AWS access key ids: 20 characters, AKIA (long-term) or ASIA (STS).
//   - GitHub: https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/
//     and fine-grained "github_pat_" tokens.
//   - JWT: RFC 7519 compact serialization, three base64url segments; the
//     header is a JSON object and so always starts with "eyJ".
//   - PEM: RFC 7468 encapsulation boundaries, plus OpenSSH and PGP private
//     key blocks, which use the same boundary syntax.
//   - URL credentials: RFC 3986 section 3.2.1 userinfo.
//   - Bearer tokens: RFC 6750 section 2.1 b64token.
//   - GitLab personal access tokens: "glpat-" and 20 base64url characters,
//     or 27 and more in the routable format, whose ".<version><id>" tail
//     is left (it names the token, it does not authenticate).
//   - npm access tokens: "npm_" and 36 letters and digits.
//   - PyPI API tokens: "pypi-" and a base64url macaroon, whose serialized
//     form starts with "AgE".
//   - Hugging Face user access tokens: "hf_" and 34 letters.
//   - SendGrid API keys: "SG.", 22 base64url characters, ".", 43 more.
//   - DigitalOcean tokens: "dop_v1_" (personal), "doo_v1_" (OAuth) and
//     "dor_v1_" (refresh), then 64 lower-case hex digits.
//
// Deliberate deviations, all towards redacting more: Stripe test keys
// (sk_test_, rk_test_) are redacted along with live ones; an AWS secret is
// any run of 40 or more base64 characters assigned to a *secret_access_key
// name, in any case and with '_', '-', ' ' or nothing between the words; a
// URL password may contain unencoded '@' (it runs to the last '@' of the
// authority) and '[' (not allowed by RFC 3986, common in practice); a bearer
// token is redacted wherever "Bearer <token>" appears, not only in an
// Authorization header; GitHub, Anthropic, Slack and Stripe tokens are
// redacted even when glued to a preceding letter or digit, their prefixes
// being distinctive enough.
var rules = []Rule{
	{Name: "private-key", matchers: []matcher{pemMatcher{}}},
	{Name: "aws-access-key-id", matchers: []matcher{
		tokenMatcher{lead: "AKIA", body: isUpperAlnum, min: 16, max: 16},
		tokenMatcher{lead: "ASIA", body: isUpperAlnum, min: 16, max: 16},
	}},
	{Name: "aws-secret-access-key", matchers: []matcher{
		awsSecretMatcher{lead: "ecret"},
		awsSecretMatcher{lead: "ECRET"},
	}},
	{Name: "github-token", matchers: []matcher{
		tokenMatcher{lead: "gh", next: []string{"p_", "o_", "u_", "s_", "r_"}, body: isAlnum, min: minGitHubBody, glued: true},
		tokenMatcher{lead: "github_pat_", body: isWord, min: minGitHubPATBody, glued: true},
	}},
	// Before openai-api-key, which matches the same text.
	{Name: "anthropic-api-key", matchers: []matcher{
		tokenMatcher{lead: "sk-ant-", body: isB64URL, min: minAnthropicBody, glued: true},
	}},
	{Name: "openai-api-key", matchers: []matcher{
		// Covers sk-proj-, sk-svcacct- and sk-admin- keys too.
		tokenMatcher{lead: "sk-", body: isB64URL, min: minOpenAIBody, needDigit: true},
	}},
	{Name: "google-api-key", matchers: []matcher{
		tokenMatcher{lead: "AIza", body: isB64URL, min: 35, max: 35},
	}},
	{Name: "slack-token", matchers: []matcher{
		tokenMatcher{lead: "xox", next: []string{"a-", "b-", "p-", "r-", "s-"}, body: isAlnumDash, min: minSlackBody, glued: true, needDigit: true},
	}},
	{Name: "stripe-key", matchers: []matcher{
		tokenMatcher{lead: "sk_", next: []string{"live_", "test_"}, body: isAlnum, min: minStripeBody, glued: true},
		tokenMatcher{lead: "rk_", next: []string{"live_", "test_"}, body: isAlnum, min: minStripeBody, glued: true},
	}},
	{Name: "gitlab-token", matchers: []matcher{
		tokenMatcher{lead: "glpat-", body: isB64URL, min: minGitLabBody},
	}},
	{Name: "npm-token", matchers: []matcher{
		tokenMatcher{lead: "npm_", body: isAlnum, min: 36, max: 36},
	}},
	{Name: "pypi-token", matchers: []matcher{
		tokenMatcher{lead: "pypi-AgE", body: isB64URL, min: minPyPIBody},
	}},
	{Name: "huggingface-token", matchers: []matcher{
		tokenMatcher{lead: "hf_", body: isAlpha, min: minHFBody},
	}},
	{Name: "sendgrid-api-key", matchers: []matcher{
		segmentedMatcher{lead: "SG.", sizes: []int{22, 43}, body: isB64URL},
	}},
	{Name: "digitalocean-token", matchers: []matcher{
		// Whole leads, not "do" and continuations: "do" starts half the
		// words of prose, each a false start of strings.Index.
		tokenMatcher{lead: "dop_v1_", body: isLowerHex, min: 64, max: 64},
		tokenMatcher{lead: "doo_v1_", body: isLowerHex, min: 64, max: 64},
		tokenMatcher{lead: "dor_v1_", body: isLowerHex, min: 64, max: 64},
	}},
	{Name: "jwt", matchers: []matcher{jwtMatcher{}}},
	{Name: "url-credentials", matchers: []matcher{urlMatcher{}}},
	{Name: "bearer-token", matchers: []matcher{
		bearerMatcher{lead: "Bearer"},
		bearerMatcher{lead: "bearer"},
		bearerMatcher{lead: "BEARER"},
	}},
}
