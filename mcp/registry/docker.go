package registry

// What of the user's machine a container is given: docker's runtime
// arguments that name a path or an environment variable of the host
// give the container what they name, so the user must be the one to
// name it.

import (
	"regexp"
	"strings"
)

// volumeName is a docker volume's name: a source that names no path of
// the host (docker takes "." and "/…" for paths).
var volumeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// checkHostSide refuses a docker runtime argument whose value, as from
// says it was written, gives the container something of the host the
// server.json chose rather than the user: a host path of -v, --volume
// or --mount (a volume's name is no path), the file of --env-file, or a
// variable of the user's environment passed by name with -e or --env
// (unless env, the entry's own environment, sets it). Secrets' references
// count as the user's: the user sets them.
func checkHostSide(what string, a arg, env map[string]string) error {
	v := a.value
	chosen := func(i, j int) bool {
		for _, o := range a.from[i:j] {
			if o == fromPublisher {
				return true
			}
		}
		return false
	}
	path := func(i, j int) error {
		if p := v[i:j]; p != "" && !volumeName.MatchString(p) && chosen(i, j) {
			return unsafef("%s: %s would give the container %q of your machine, which the server.json chose (a host path must be your own answer)", what, a.flag, p)
		}
		return nil
	}
	switch a.flag {
	case "--env-file":
		return path(0, len(v))
	case "-v", "--volume":
		if k := strings.IndexByte(v, ':'); k >= 0 {
			return path(0, k)
		}
		// A path of the container alone: an anonymous volume.
	case "--mount":
		if strings.ContainsRune(v, '"') { // fields quoted as CSV: taken whole
			return path(0, len(v))
		}
		at := 0
		for _, field := range strings.Split(v, ",") {
			key, _, ok := strings.Cut(field, "=")
			if k := strings.ToLower(strings.TrimSpace(key)); ok && (k == "source" || k == "src") {
				if err := path(at+len(key)+1, at+len(field)); err != nil {
					return err
				}
			}
			at += len(field) + 1
		}
	case "-e", "--env":
		name, _, set := strings.Cut(v, "=")
		if _, given := env[name]; !set && !given && chosen(0, len(v)) {
			return unsafef("%s: %s %s would give the container %s of your environment, which the server.json chose", what, a.flag, name, name)
		}
	}
	return nil
}
