package mcp

// The verified read of a skill's file: the file must be in the manifest
// of the entry held, its bytes of the size and SHA-256 digest the
// manifest gives, and SKILL.md's frontmatter the entry's, field by field.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrSkillVerification is matched by the errors of a verification that
// failed (*SkillDigestError, *SkillSizeError, *SkillUnlistedError,
// *SkillFrontmatterError): the content was not what the entry describes
// and was not used. The skill may have changed since its entry was
// fetched: GetSkill fetches it again (and an approval bound to the old
// manifest no longer holds).
var ErrSkillVerification = errors.New("mcp: skill verification failed")

// SkillDigestError: the file's bytes do not hash to the manifest's digest.
type SkillDigestError struct {
	Skill, URI string // the skill's SKILL.md, and the file read
	Want, Got  string // sha256:<hex>
}

func (e *SkillDigestError) Error() string {
	return fmt.Sprintf("mcp: skill %q: file %q: digest %s, but the entry says %s; the content is not used (refresh the entry with GetSkill)", e.Skill, e.URI, e.Got, e.Want)
}

func (e *SkillDigestError) Is(target error) bool { return target == ErrSkillVerification }

// SkillSizeError: the file's length is not the manifest's size (checked
// before any digest is computed).
type SkillSizeError struct {
	Skill, URI string
	Want, Got  int64
}

func (e *SkillSizeError) Error() string {
	return fmt.Sprintf("mcp: skill %q: file %q has %d bytes, but the entry says %d; the content is not used (refresh the entry with GetSkill)", e.Skill, e.URI, e.Got, e.Want)
}

func (e *SkillSizeError) Is(target error) bool { return target == ErrSkillVerification }

// SkillUnlistedError: a file the manifest does not list (or, for a
// dynamic skill, one outside its directory). Nothing was read.
type SkillUnlistedError struct {
	Skill, URI string
}

func (e *SkillUnlistedError) Error() string {
	return fmt.Sprintf("mcp: skill %q: %.300q is not a file of its manifest; it is not read (refresh the entry with GetSkill to see files added since)", e.Skill, e.URI)
}

func (e *SkillUnlistedError) Is(target error) bool { return target == ErrSkillVerification }

// SkillFrontmatterError: SKILL.md's frontmatter is not the entry's.
// Field names the first field that differs, in sorted order ("" when
// the file has no frontmatter that parses: Err says why); Entry and
// File are its values (nil for a field one of them lacks).
type SkillFrontmatterError struct {
	Skill       string
	Field       string
	Entry, File any
	Err         error
}

func (e *SkillFrontmatterError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("mcp: skill %q: SKILL.md's frontmatter does not parse: %v; the skill is not loaded", e.Skill, e.Err)
	}
	return fmt.Sprintf("mcp: skill %q: SKILL.md's frontmatter field %q is %.200s, but the entry says %.200s; the skill is not loaded", e.Skill, e.Field, showValue(e.File), showValue(e.Entry))
}

func (e *SkillFrontmatterError) Is(target error) bool { return target == ErrSkillVerification }

func (e *SkillFrontmatterError) Unwrap() error { return e.Err }

func showValue(v any) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprintf("%#v", v)
}

// SkillFile is a file of a skill, read and verified.
type SkillFile struct {
	URI      string
	MimeType string
	Content  []byte // the file's raw bytes (a text's UTF-8, a blob decoded)
	// Verified: the bytes are those of the manifest (size and digest);
	// false for a dynamic skill, whose content nothing can verify.
	Verified bool
	// Nested: the file is the SKILL.md of another skill within this
	// one: to this skill it is ordinary markdown, and its frontmatter
	// was neither parsed nor acted on (loading that skill is a load of
	// its own, under its own approval).
	Nested bool
}

// ReadSkillFile reads the file uri of the skill whose entry is s
// (resources/read) and verifies it. The file must be in the entry's
// manifest (for a dynamic skill, within its directory): else it is not
// read, and the error is a *SkillUnlistedError. Its bytes must have the
// manifest's size (*SkillSizeError, checked first, and a blob larger
// than the size is not decoded) and digest (*SkillDigestError). When
// uri is the skill's own SKILL.md, its YAML frontmatter is parsed and
// compared, field by field, with the entry's (*SkillFrontmatterError):
// for a dynamic skill too, whose content is otherwise unverified
// (SkillFile.Verified false) and bounded by MaxSkillBytes. An entry
// that fails CheckSkill is refused before anything is sent.
//
// Reading a file this way loads nothing: a program acting on a skill
// calls it only for files the skill needs, when it needs them.
func (c *Connection) ReadSkillFile(ctx context.Context, s *Skill, uri string) (*SkillFile, error) {
	if err := CheckSkill(s); err != nil {
		return nil, err
	}
	root, _ := SkillRoot(s.URI)
	var want *SkillResource
	if s.Dynamic {
		if _, ok := withinSkill(root, uri); !ok && uri != s.URI {
			return nil, &SkillUnlistedError{Skill: s.URI, URI: uri}
		}
	} else {
		i := slices.IndexFunc(s.Resources, func(r SkillResource) bool { return r.URI == uri })
		if i < 0 {
			return nil, &SkillUnlistedError{Skill: s.URI, URI: uri}
		}
		want = &s.Resources[i]
	}
	res, err := c.ReadResource(ctx, &ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	var rc *ResourceContents
	for i := range res.Contents {
		if res.Contents[i].URI == uri {
			rc = &res.Contents[i]
			break
		}
	}
	if rc == nil {
		return nil, wrap("resources/read "+strconv.Quote(uri), &badResult{errors.New("no contents of the uri read")})
	}
	limit := int64(MaxSkillBytes)
	if want != nil {
		limit = want.Size
	}
	content, n, err := contentBytes(rc, limit)
	if err != nil {
		return nil, wrap("resources/read "+strconv.Quote(uri), &badResult{err})
	}
	f := &SkillFile{URI: uri, MimeType: rc.MimeType, Content: content, Verified: want != nil}
	switch {
	case want != nil && n != want.Size:
		return nil, &SkillSizeError{Skill: s.URI, URI: uri, Want: want.Size, Got: n}
	case want == nil && n > MaxSkillBytes:
		return nil, &SkillLimitError{URI: s.URI, What: "bytes", Got: n, Limit: MaxSkillBytes}
	case want != nil:
		sum := sha256.Sum256(content)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want.Digest {
			return nil, &SkillDigestError{Skill: s.URI, URI: uri, Want: want.Digest, Got: got}
		}
	}
	if uri == s.URI {
		if err := CompareFrontmatter(s, content); err != nil {
			return nil, err
		}
	} else {
		f.Nested = strings.HasSuffix(uri, "/SKILL.md")
	}
	return f, nil
}

// contentBytes returns the raw bytes of rc and their length; a content
// longer than limit comes back without its bytes (a blob is not decoded).
func contentBytes(rc *ResourceContents, limit int64) ([]byte, int64, error) {
	switch {
	case rc.Text != nil:
		if int64(len(*rc.Text)) > limit {
			return nil, int64(len(*rc.Text)), nil
		}
		return []byte(*rc.Text), int64(len(*rc.Text)), nil
	case rc.Blob != nil:
		enc := base64.StdEncoding
		if n := int64(enc.DecodedLen(len(*rc.Blob))); n > limit+2 { // padding: DecodedLen rounds up
			return nil, n, nil
		}
		b, err := enc.DecodeString(*rc.Blob)
		if err != nil {
			return nil, 0, fmt.Errorf("the blob is not base64: %v", err)
		}
		return b, int64(len(b)), nil
	}
	return nil, 0, errors.New("the contents have neither text nor blob")
}

// CompareFrontmatter parses the YAML frontmatter of content (a SKILL.md)
// and compares it, field by field, with the entry's: the same fields,
// each of the same value as JSON would hold it. The error is a
// *SkillFrontmatterError.
func CompareFrontmatter(s *Skill, content []byte) error {
	fm, _, err := ParseFrontmatter(content)
	if err != nil {
		return &SkillFrontmatterError{Skill: s.URI, Err: err}
	}
	keys := make([]string, 0, len(fm)+len(s.Frontmatter))
	for k := range fm {
		keys = append(keys, k)
	}
	for k := range s.Frontmatter {
		if _, ok := fm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fv, fok := fm[k]
		ev, eok := s.Frontmatter[k]
		if fok != eok || !reflect.DeepEqual(fv, ev) {
			return &SkillFrontmatterError{Skill: s.URI, Field: k, Entry: ev, File: fv}
		}
	}
	return nil
}

// maxFrontmatterNodes bounds the YAML nodes a frontmatter may expand to,
// aliases followed: a billion laughs stops here.
const maxFrontmatterNodes = 10000

// ParseFrontmatter splits a SKILL.md into its YAML frontmatter, as JSON
// would hold it (map[string]any, []any, string, float64, bool, nil), and
// its body. The frontmatter comes first (after an optional byte order
// mark), between two lines of "---", and must be a mapping with string
// keys, each given once; it is bounded to 64 KiB and 10,000 nodes with
// aliases expanded. Scalars keep YAML's types, except timestamps and
// binary values, which stay strings (as YAML 1.2's core schema reads
// them). A value JSON cannot hold (NaN, ±Inf) is an error.
func ParseFrontmatter(content []byte) (map[string]any, []byte, error) {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	rest, ok := cutLine(content, "---")
	if !ok {
		return nil, nil, errors.New("SKILL.md does not begin with a --- line")
	}
	var block, body []byte
	for off := 0; ; {
		i := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if i >= 0 {
			line = rest[off : off+i+1]
		}
		if strings.TrimRight(string(line), " \t\r\n") == "---" {
			block, body = rest[:off], rest[off+len(line):]
			break
		}
		if i < 0 || off > maxSkillFrontmatterBytes {
			return nil, nil, fmt.Errorf("no closing --- line within the first %d bytes", maxSkillFrontmatterBytes)
		}
		off += i + 1
	}
	if len(block) > maxSkillFrontmatterBytes {
		return nil, nil, fmt.Errorf("the frontmatter is %d bytes, over the limit of %d", len(block), maxSkillFrontmatterBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(block, &doc); err != nil {
		return nil, nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, errors.New("the frontmatter is not a mapping")
	}
	budget := maxFrontmatterNodes
	v, err := yamlValue(doc.Content[0], &budget, 0)
	if err != nil {
		return nil, nil, err
	}
	return v.(map[string]any), body, nil
}

// cutLine returns what follows b's first line when that line is want
// (trailing spaces, tabs and \r aside).
func cutLine(b []byte, want string) ([]byte, bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, false
	}
	if strings.TrimRight(string(b[:i]), " \t\r") != want {
		return nil, false
	}
	return b[i+1:], true
}

// yamlValue is n as JSON would hold it, within budget nodes.
func yamlValue(n *yaml.Node, budget *int, depth int) (any, error) {
	*budget--
	if *budget < 0 || depth > 64 {
		return nil, fmt.Errorf("the frontmatter expands past %d nodes or 64 levels", maxFrontmatterNodes)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return yamlValue(n.Alias, budget, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not read", k.Line)
			}
			if k.Kind != yaml.ScalarNode || (k.ShortTag() != "!!str" && k.ShortTag() != "!!int" && k.ShortTag() != "!!float" && k.ShortTag() != "!!bool") {
				return nil, fmt.Errorf("line %d: a key that is not a string", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q given twice", k.Line, k.Value)
			}
			v, err := yamlValue(n.Content[i+1], budget, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			err := n.Decode(&b)
			return b, err
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				var f float64 // past int64: as JSON's numbers are
				if err := n.Decode(&f); err != nil {
					return nil, err
				}
				return f, nil
			}
			return float64(i), nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, err
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
			}
			return f, nil
		default: // !!str, !!timestamp, !!binary, a tag of the author's
			return n.Value, nil
		}
	}
	return nil, fmt.Errorf("line %d: a YAML node of an unknown kind", n.Line)
}
