package registry

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/registry/pkg/model"
)

// origin is where a piece of a written value comes from.
type origin int

const (
	fromPublisher origin = iota // the server.json: a fixed value, a default, a choice
	fromUser                    // the user's answer
	fromRef                     // a ${VAR} this package writes for a secret
)

// seg is a piece of a written value.
type seg struct {
	text string
	from origin
}

// render joins segs, and says where each byte of the result comes
// from. Every "${" in the result must be a reference this package wrote
// or lie whole within the user's own answer: one the publisher's text
// would form, alone or beside another piece, is refused, since the
// config would read that variable from the user's environment.
func render(what string, segs []seg) (string, []origin, error) {
	var b strings.Builder
	owner := make([]int, 0, 64) // the seg of each byte
	for i, s := range segs {
		b.WriteString(s.text)
		for range len(s.text) {
			owner = append(owner, i)
		}
	}
	out := b.String()
	for i := strings.Index(out, "${"); i >= 0; {
		a, z := owner[i], owner[i+1]
		if a != z || segs[a].from == fromPublisher {
			return "", nil, unsafef("%s would hold %q, which the config reads from the environment", what, out[i:i+min(len(out)-i, 24)])
		}
		next := strings.Index(out[i+2:], "${")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	from := make([]origin, len(owner))
	for i, o := range owner {
		from[i] = segs[o].from
	}
	return out, from, nil
}

// checkText refuses a publisher's string that will be written into the
// entry: one holding "${" (the config would expand it from the user's
// environment) or a control character (the entry is shown to the user
// before it is written, and must be shown as it is).
func checkText(what, s string) error {
	if strings.Contains(s, "${") {
		return unsafef("%s %q holds ${, which the config would read from your environment", what, s)
	}
	if i := strings.IndexFunc(s, control); i >= 0 {
		return unsafef("%s holds the control character %U", what, []rune(s[i:])[0])
	}
	return nil
}

// control reports the runes never written: C0 and C1 controls, DEL and
// the bidirectional overrides.
func control(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == unicode.ReplacementChar
}

// slot is one value the entry needs: an input's, or a variable's. Slots
// of the same kind and name are one: the same variable is asked once.
type slot struct {
	kind, name string
	in         model.Input
	secret     bool
	include    bool   // a secret written as a reference (required, or asked for all)
	ask        *Input // a value the user is asked for
	ref        string // the variable of a secret, once named
}

// value is the slot's piece of the entry, or ok false when it has none
// (an optional input left empty, with no default).
func (s *slot) value() (seg, bool, error) {
	if s.secret {
		if s.include {
			return seg{"${" + s.ref + "}", fromRef}, true, nil
		}
		if s.in.Default != "" {
			return seg{s.in.Default, fromPublisher}, true, nil
		}
		return seg{}, false, nil
	}
	v, from := "", fromUser
	if s.ask != nil {
		v = s.ask.Value
	}
	if v == "" {
		v, from = s.in.Default, fromPublisher
	}
	if v == "" {
		if s.ask != nil && s.in.IsRequired {
			return seg{}, false, &answerError{fmt.Sprintf("the %s %s is required", s.kind, s.name)}
		}
		return seg{}, false, nil
	}
	if from == fromUser {
		if i := strings.IndexFunc(v, control); i >= 0 {
			return seg{}, false, &answerError{fmt.Sprintf("the %s %s holds the control character %U", s.kind, s.name, []rune(v[i:])[0])}
		}
		if len(s.in.Choices) > 0 && !slices.Contains(s.in.Choices, v) {
			return seg{}, false, &answerError{fmt.Sprintf("the %s %s must be one of %s", s.kind, s.name, strings.Join(s.in.Choices, ", "))}
		}
		switch s.in.Format {
		case model.FormatNumber:
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return seg{}, false, &answerError{fmt.Sprintf("the %s %s must be a number", s.kind, s.name)}
			}
		case model.FormatBoolean:
			if v != "true" && v != "false" {
				return seg{}, false, &answerError{fmt.Sprintf("the %s %s must be true or false", s.kind, s.name)}
			}
		}
	}
	return seg{v, from}, true, nil
}

// checkInput refuses an input whose default or choices hold what
// checkText refuses.
func checkInput(what string, in model.Input) error {
	if err := checkText(what+"'s default", in.Default); err != nil {
		return err
	}
	for _, c := range in.Choices {
		if err := checkText(what+"'s choice", c); err != nil {
			return err
		}
	}
	return nil
}

var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

// part is a piece of a template: text, or a slot.
type part struct {
	text string
	slot *slot
}

// template is a value of the server.json: fixed text with {variables},
// or a value to be given whole.
type template []part

// fill is the template's value, and where each of its bytes comes from:
// ok false when one of its slots has none. With empty, such a slot is
// taken as "" instead.
func (t template) fill(what string, empty bool) (string, []origin, bool, error) {
	return t.fillEscaped(what, empty, nil)
}

// fillEscaped is fill with each slot's value but a secret's reference
// passed through escape (nil: none).
func (t template) fillEscaped(what string, empty bool, escape func(string) string) (string, []origin, bool, error) {
	var segs []seg
	for _, p := range t {
		if p.slot == nil {
			segs = append(segs, seg{p.text, fromPublisher})
			continue
		}
		s, ok, err := p.slot.value()
		if err != nil {
			return "", nil, false, err
		}
		if !ok && !empty {
			return "", nil, false, nil
		}
		if escape != nil && s.from != fromRef {
			s.text = escape(s.text)
		}
		segs = append(segs, s)
	}
	v, from, err := render(what, segs)
	return v, from, err == nil, err
}

// hasRef reports whether the template writes a reference.
func (t template) hasRef() bool {
	for _, p := range t {
		if p.slot != nil && p.slot.secret && p.slot.include {
			return true
		}
	}
	return false
}
