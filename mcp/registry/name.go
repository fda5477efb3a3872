package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

var nameChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// ConfigName is the config name of a registry name, lower case: the
// owner (the namespace's label after the top-level one: the domain, or
// the account after "io.github." and "io.gitlab."), a dash, and the name
// after the slash, with what Claude Code refuses in a name made '-'. The
// owner is left out when the name already starts with it, the name when
// the owner already ends with it:
//
//	com.neon/mcp                        → neon-mcp
//	com.cloudflare.mcp/mcp              → cloudflare-mcp
//	io.github.github/github-mcp-server  → github-mcp-server
//	io.github.microsoft/playwright-mcp  → microsoft-playwright-mcp
//
// A name over MaxConfigName bytes is cut, as ConfigNames cuts its
// longer names.
//
// Two servers meet when their namespaces differ only in a subdomain
// (com.x.docs/mcp, com.x.api/mcp) or the top-level label (io.github.x/y,
// com.x/y: a GitHub account and a domain, which need not have one
// owner), or when a dash moves between owner and name (io.github.a-b/c,
// io.github.a/b-c). ConfigNames are the longer names that tell them
// apart, and Plan.ChooseName takes one when the config has another
// server under this one.
func ConfigName(name string) string {
	ns, local := splitName(name)
	return bounded(joinName(ownerLabels(ns)[:1], local), nameHash(name))
}

// nameHash is the first 8 hex digits of the SHA-256 of a registry name.
func nameHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}

// bounded is n, or, over MaxConfigName bytes, its start followed by '-'
// and hash.
func bounded(n, hash string) string {
	if len(n) <= MaxConfigName {
		return n
	}
	return strings.TrimRight(n[:MaxConfigName-len(hash)-1], "-_") + "-" + hash
}

// MaxConfigName bounds the longer names of ConfigNames, in bytes.
const MaxConfigName = 64

// ConfigNames are the config names a server may take, shortest first,
// each once and each of the characters a Claude Code name accepts:
// ConfigName; the owner with the namespace's subdomains
// (com.x.api/mcp → x-api-mcp); the whole name, each '.' and '/' made
// '_' (io.github.x/y → io_github_x_y, com.x/y → com_x_y,
// io.github.a-b/c → io_github_a-b_c); and that followed by the first 8
// hex digits of the SHA-256 of the name as the registry spells it, which
// no two names share but by chance. A name over MaxConfigName bytes is
// cut and ends with those digits.
func ConfigNames(name string) []string {
	ns, local := splitName(name)
	hash := nameHash(name)
	whole := strings.Trim(nameChars.ReplaceAllString(strings.NewReplacer(".", "_", "/", "_").Replace(strings.ToLower(name)), "-"), "-_")
	if whole == "" {
		whole = "server" // as joinName has it
	}
	out := []string{ConfigName(name)}
	for _, n := range []string{joinName(ownerLabels(ns), local), whole, whole + "-" + hash} {
		n = bounded(n, hash)
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// splitName is a registry name's namespace and name after the slash,
// lower case.
func splitName(name string) (ns, local string) {
	ns, local, ok := strings.Cut(strings.ToLower(name), "/")
	if !ok {
		ns, local = "", ns
	}
	return ns, local
}

// ownerLabels are the namespace's labels after the top-level one, or
// after "io.github." and "io.gitlab.": the owner, then its subdomains.
func ownerLabels(ns string) []string {
	labels := strings.Split(ns, ".")
	switch {
	case len(labels) > 2 && labels[0] == "io" && (labels[1] == "github" || labels[1] == "gitlab"):
		return labels[2:]
	case len(labels) > 1:
		return labels[1:]
	}
	return labels
}

// joinName is the owner (the labels, cleaned and joined by '-') and the
// local name, as ConfigName joins them.
func joinName(labels []string, local string) string {
	owner := clean(strings.Join(labels, "-"))
	local = clean(local)
	switch {
	case owner == "" && local == "":
		return "server"
	case owner == "" || local == owner || strings.HasPrefix(local, owner+"-"):
		return local
	case local == "" || strings.HasSuffix(owner, "-"+local):
		return owner
	}
	return owner + "-" + local
}

func clean(s string) string { return strings.Trim(nameChars.ReplaceAllString(s, "-"), "-") }

// words splits a name into its words, upper case: at anything not a
// letter or digit, and where a lower-case letter meets an upper-case one
// (apiClientSecret → API CLIENT SECRET).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r) || r > unicode.MaxASCII:
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// envName is s as an environment variable's name: its words joined by
// '_', and '_' first when it would start with a digit.
func envName(s string) string {
	n := strings.Join(words(s), "_")
	if n != "" && n[0] >= '0' && n[0] <= '9' {
		n = "_" + n
	}
	return n
}

// variableName is the environment variable a server's secret is read
// from: the config name's words, then the input's, unless the input's
// already start with them (NEON_MCP + AUTHORIZATION →
// NEON_MCP_AUTHORIZATION; GITHUB + GITHUB_TOKEN → GITHUB_TOKEN).
func variableName(server, input string) string {
	prefix, in := envName(server), envName(input)
	switch {
	case in == "":
		return prefix
	case prefix == "" || in == prefix || strings.HasPrefix(in, prefix+"_"):
		return in
	}
	return prefix + "_" + in
}

// secretWords end the names of inputs that hold secrets, whether or not
// the publisher marked them so; secretPairs likewise, as two words.
var (
	secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PAT", "AUTHORIZATION", "COOKIE", "DSN", "CONNECTIONSTRING"}
	// A connection string or a database's URL carries its password
	// (mongodb://user:pass@…, postgres://…).
	secretPairs = [][2]string{{"API", "KEY"}, {"ACCESS", "KEY"}, {"PRIVATE", "KEY"}, {"SECRET", "KEY"}, {"AUTH", "KEY"}, {"ACCOUNT", "KEY"}, {"SERVICE", "KEY"}, {"LICENSE", "KEY"},
		{"CONNECTION", "STRING"}, {"CONN", "STRING"}, {"DATABASE", "URL"}, {"DATABASE", "URI"}, {"DB", "URL"}, {"DB", "URI"}}
)

// looksSecret reports whether an input's name says it holds a secret:
// its last word is one of secretWords (GITHUB_TOKEN, X-Ref-Api-Key,
// --motherduck-token, Authorization), or its last two one of
// secretPairs. A word before a limit or a count does not count
// (NEO4J_RESPONSE_TOKEN_LIMIT, MAX_TOKENS are not secrets).
func looksSecret(name string) bool {
	w := words(name)
	if len(w) == 0 {
		return false
	}
	if slices.Contains(secretWords, w[len(w)-1]) {
		return true
	}
	return len(w) >= 2 && slices.Contains(secretPairs, [2]string{w[len(w)-2], w[len(w)-1]})
}
