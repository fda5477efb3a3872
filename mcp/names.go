package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/mcplug/mcplug/mcp/config"
)

// maxToolNameLength is the longest tool name model APIs accept.
const maxToolNameLength = 64

// ExposedName returns the name a Manager gives to the tool of a server,
// "mcp__<server>__<tool>", made to match ^[a-zA-Z0-9_-]{1,64}$: every other
// character becomes '_', and a longer name is cut and ends with '_' and 8
// hex digits of a hash of both names, stable and distinct. Calls are routed
// by a table, never by splitting the name.
func ExposedName(server, tool string) string {
	name := "mcp__" + config.SanitizeName(server) + "__" + config.SanitizeName(tool)
	if len(name) <= maxToolNameLength {
		return name
	}
	return withHash(name, server, tool)
}

// disambiguate names a tool (or prompt) whose exposed name collides with
// another's: with a hash of server and tool, and, should that be taken
// too, of a counter beside them.
func disambiguate(server, tool string, taken func(string) bool) string {
	name := withHash("mcp__"+config.SanitizeName(server)+"__"+config.SanitizeName(tool), server, tool)
	for n := 1; taken(name); n++ {
		name = withHash(ExposedName(server, tool), server, tool+"\x00"+strconv.Itoa(n))
	}
	return name
}

func withHash(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name)+len(suffix) > maxToolNameLength {
		name = name[:maxToolNameLength-len(suffix)]
	}
	return name + suffix
}
