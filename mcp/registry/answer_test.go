package registry_test

import "github.com/mcplug/mcplug/mcp/registry"

// answer is the tests' answer to an input: its first choice, its
// default (left empty), or a value of its format.
func answer(in *registry.Input) string {
	switch {
	case len(in.Choices) > 0:
		return in.Choices[0]
	case in.Default != "":
		return ""
	case in.Format == "number":
		return "7"
	case in.Format == "boolean":
		return "true"
	case in.Format == "filepath":
		return "/data"
	}
	return "x-" + in.Name
}
