package ndjson

import "testing"

// feedByByte is valueScan.feed as it was, one byte at a time: the
// reference the faster feed must agree with.
func (s *valueScan) feedByByte(b []byte) int {
	for _, ch := range b {
		switch {
		case s.closed:
			if ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' {
				return scanBad
			}
		case s.inString:
			switch {
			case s.escaped:
				s.escaped = false
			case ch == '\\':
				s.escaped = true
			case ch == '"':
				s.inString = false
			}
		case ch == '"':
			if !s.started {
				return scanBad
			}
			s.inString = true
		case ch == '{' || ch == '[':
			s.started = true
			s.depth++
		case ch == '}' || ch == ']':
			s.depth--
			if s.depth < 0 {
				return scanBad
			}
			if s.depth == 0 {
				s.closed = true
			}
		case !s.started && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n':
			return scanBad
		}
	}
	if s.closed {
		return scanDone
	}
	return scanOpen
}

func FuzzValueScan(f *testing.F) {
	for _, seed := range []string{`{"a":"b\"c\\"}`, `{"x":"\\\\\"}"}  `, `{"t":"` + "line\\n" + `more"`, `[{"a":[1,"]"]}]`, `{"a":"\`, `x{}`} {
		f.Add(seed, 3)
	}
	f.Fuzz(func(t *testing.T, in string, cut int) {
		// Fed whole and in two pieces, the fast scan must agree with the
		// byte-by-byte one, state included.
		b := []byte(in)
		var fast, slow valueScan
		if got, want := fast.feed(b), slow.feedByByte(b); got != want || fast != slow {
			t.Fatalf("whole %q: feed %d %+v, by byte %d %+v", in, got, fast, want, slow)
		}
		if cut < 0 || cut > len(b) {
			return
		}
		fast, slow = valueScan{}, valueScan{}
		r1, r2 := fast.feed(b[:cut]), slow.feedByByte(b[:cut])
		if r1 != r2 || fast != slow {
			t.Fatalf("first piece of %q at %d: %d %+v, %d %+v", in, cut, r1, fast, r2, slow)
		}
		if r1 == scanBad {
			return
		}
		if got, want := fast.feed(b[cut:]), slow.feedByByte(b[cut:]); got != want || fast != slow {
			t.Fatalf("second piece of %q at %d: %d %+v, %d %+v", in, cut, got, fast, want, slow)
		}
	})
}
