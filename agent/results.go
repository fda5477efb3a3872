package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcplug/mcplug/mcp"
)

// A tool result whose text is past MaxResultTokens is kept whole in a
// file of the Agent's own, as Claude Code keeps one: the model gets the
// head of it, the file's path, size and line count, and a tool to read
// any range of it (ReadResultToolName). Nothing the server returned is
// lost. The files live in a folder the Agent makes (os.MkdirTemp in
// ResultDir, mode 0700; each file 0600) and removes at Close.

// ReadResultToolName is the tool an Agent offers the model once it has
// kept a result in a file: it reads a range of bytes of one of the
// Agent's files, and no other file.
const ReadResultToolName = "read_tool_result"

// Defaults of the results kept in files.
const (
	// DefaultMaxResultTokens is Claude Code's bound on an MCP tool's
	// result (its MAX_MCP_OUTPUT_TOKENS).
	DefaultMaxResultTokens = 25_000
	// DefaultMaxKeptBytes bounds what the files of one Agent hold
	// together; past it a result is cut, as it would be without files.
	DefaultMaxKeptBytes = 1 << 30
)

// lineBlock is the span of a kept file over which its newlines are
// counted ahead, so that a read finds its line numbers quickly.
const lineBlock = 64 << 10

// maxResultTokens is MaxResultTokens, else $MAX_MCP_OUTPUT_TOKENS, else
// DefaultMaxResultTokens; 0 when results are not kept (a negative
// MaxResultTokens).
func (a *Agent) maxResultTokens() int {
	switch {
	case a.MaxResultTokens > 0:
		return a.MaxResultTokens
	case a.MaxResultTokens < 0:
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("MAX_MCP_OUTPUT_TOKENS")); err == nil && n > 0 {
		return n
	}
	return DefaultMaxResultTokens
}

// maxReadBytes bounds one read of a kept file: half the cap, at four
// bytes a token, so that a read's result is never past the cap itself.
func (a *Agent) maxReadBytes() int { return max(a.maxResultTokens()*2, 64) }

// headBytes is how much of a kept result's head the model gets at once:
// a tenth of the cap, at four bytes a token.
func (a *Agent) headBytes() int { return max(a.maxResultTokens()*4/10, 64) }

// overCap reports whether text is past the cap, and its tokens: four
// bytes a token, or, when that estimate is neither well under the cap
// (half of it) nor far past it (four times), the count of CountTokens or
// of the Model (a TokenCounter), as Claude Code asks the API then. A
// count that fails, or is not positive, leaves the estimate.
func (a *Agent) overCap(ctx context.Context, text string, limit int) (int, bool) {
	est := (len(text) + 3) / 4
	if est <= limit/2 || est > limit*4 {
		return est, est > limit
	}
	n := est
	if a.CountTokens != nil {
		if counted := a.CountTokens(text); counted > 0 {
			n = counted
		}
	} else if tc, ok := a.Model.(TokenCounter); ok {
		if counted, err := tc.CountTokens(ctx, text); err == nil && counted > 0 {
			n = counted
		}
	}
	return n, n > limit
}

// fitText is the text of a result of the tool name as the model gets
// it: the text itself, or, past the cap, its head and where the whole of
// it is kept. format names what the text is ("plain text", "JSON"). A
// result that cannot be kept is cut at MaxResultBytes, with a note why.
func (a *Agent) fitText(ctx context.Context, name, text, format string) string {
	limit := a.maxResultTokens()
	if limit == 0 {
		return a.truncate(text)
	}
	tokens, over := a.overCap(ctx, text, limit)
	if !over {
		return text
	}
	path, kept, err := a.store().keep(name, text)
	if err != nil {
		return a.truncate(text) + fmt.Sprintf("\n[the whole result of %d bytes could not be kept for reading: %v]", len(text), err)
	}
	head := headOf(text, a.headBytes())
	var b strings.Builder
	fmt.Fprintf(&b, "[This result is %s bytes in %s lines, about %s tokens: more than the %s tokens a tool result may take, so it is kept whole in the file %s (%s). ",
		commas(len(text)), commas(kept.lines), commas(tokens), commas(limit), path, format)
	fmt.Fprintf(&b, "Its first %s bytes follow. Read the rest with the %s tool (path, and offset and length in bytes: at most %s bytes a read) as far as the task needs it.]\n",
		commas(len(head)), ReadResultToolName, commas(a.maxReadBytes()))
	b.WriteString(head)
	fmt.Fprintf(&b, "\n[… %s more bytes: %s {\"path\": %s, \"offset\": %d}]", commas(len(text)-len(head)), ReadResultToolName, strconv.Quote(path), len(head))
	return b.String()
}

// headOf is the first n bytes of s at most, cut at the end of a line in
// its last quarter if there is one, else at a character's start.
func headOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= n*3/4 {
		return s[:i+1]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// commas writes n with thousands separated, as the model reads sizes.
func commas(n int) string { return commas64(int64(n)) }

func commas64(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// store is the Agent's store of kept results, made on first use; a
// SubAgent shares its parent's.
func (a *Agent) store() *resultStore {
	if a.results == nil {
		a.results, a.ownsResults = &resultStore{parent: a.ResultDir, max: DefaultMaxKeptBytes}, true
	}
	return a.results
}

// Close removes the folder of the results the Agent kept in files, and
// everything in it. The Agent may chat on: a result past the cap then
// goes to a new folder, which a later Close removes. A SubAgent's Close
// removes nothing: its results are its parent's, which its parent's Close
// removes.
func (a *Agent) Close() error {
	if a.results == nil || !a.ownsResults {
		return nil
	}
	return a.results.close()
}

// resultStore is a folder of kept results.
type resultStore struct {
	mu     sync.Mutex
	parent string // where the folder is made; "" is os.TempDir()
	max    int64  // bound on the files together
	dir    string // the folder, "" until the first file and after close
	files  map[string]*keptFile
	total  int64
	n      int
}

// keptFile is what the store knows of one of its files.
type keptFile struct {
	size     int64
	lines    int
	newlines []int // newlines before each lineBlock
}

// keep writes text to a new file of the store, named after the tool.
func (s *resultStore) keep(name, text string) (string, *keptFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total+int64(len(text)) > s.max {
		return "", nil, fmt.Errorf("the agent's results already take %d of the %d bytes they may", s.total, s.max)
	}
	if s.dir == "" {
		parent := s.parent
		if parent == "" {
			parent = os.TempDir()
		}
		dir, err := os.MkdirTemp(parent, "mcplug-results-")
		if err != nil {
			return "", nil, err
		}
		s.dir, s.files = dir, map[string]*keptFile{}
	}
	s.n++
	path := filepath.Join(s.dir, fmt.Sprintf("%s-%d.txt", fileSafe(name), s.n))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, err
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", nil, err
	}
	kept := &keptFile{size: int64(len(text)), lines: strings.Count(text, "\n")}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		kept.lines++
	}
	for at, before := 0, 0; at < len(text); at += lineBlock {
		kept.newlines = append(kept.newlines, before)
		before += strings.Count(text[at:min(at+lineBlock, len(text))], "\n")
	}
	s.files[path] = kept
	s.total += kept.size
	return path, kept, nil
}

// errNotKept is the error of a read of a path the store did not write.
var errNotKept = errors.New("not a file this agent kept a result in (give the path as the result names it)")

// read reads up to length bytes of the kept file path from offset,
// widened to start and end on a character's start.
func (s *resultStore) read(path string, offset, length int64) (text string, start, end int64, kept *keptFile, err error) {
	s.mu.Lock()
	kept = s.files[path]
	s.mu.Unlock()
	if kept == nil {
		return "", 0, 0, nil, errNotKept
	}
	if offset < 0 || offset >= kept.size {
		return "", 0, 0, nil, fmt.Errorf("offset %d is outside the file, which has %d bytes", offset, kept.size)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", 0, 0, nil, err
	}
	defer f.Close()
	start = max(offset-utf8.UTFMax, 0)
	buf := make([]byte, min(offset+length+utf8.UTFMax, kept.size)-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, 0, nil, err
	}
	lead := int(offset - start) // step back to the start of the character offset is in
	for lead > 0 && !utf8.RuneStart(buf[lead]) {
		lead--
	}
	stop := int(min(offset+length, kept.size) - start)
	for stop > lead && stop < len(buf) && !utf8.RuneStart(buf[stop]) {
		stop-- // end before the character the range would cut
	}
	if stop == lead { // a range shorter than its first character: that character
		stop = lead + 1
		for stop < len(buf) && !utf8.RuneStart(buf[stop]) {
			stop++
		}
	}
	return string(buf[lead:stop]), start + int64(lead), start + int64(stop), kept, nil
}

// lineAt is the number of the line the byte at offset is in, from 1.
func (s *resultStore) lineAt(path string, kept *keptFile, offset int64) (int, error) {
	block := int(offset / lineBlock)
	from := int64(block) * lineBlock
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, offset-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return kept.newlines[block] + bytes.Count(buf, []byte{'\n'}) + 1, nil
}

// has reports whether the store holds a file.
func (s *resultStore) has() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files) > 0
}

// close removes the store's folder; the store may keep files again.
func (s *resultStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir, s.files, s.total = "", nil, 0
	if err != nil {
		return fmt.Errorf("agent: removing the results kept: %w", err)
	}
	return nil
}

// fileSafe is a tool's name as part of a file name.
func fileSafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "result"
	}
	return string(b)
}

// readResultTool is the definition of the tool that reads kept results.
func (a *Agent) readResultTool() mcp.Tool {
	n := a.maxReadBytes()
	return mcp.Tool{
		Name:  ReadResultToolName,
		Title: "Read a kept tool result",
		Description: fmt.Sprintf("Read a range of a tool result that was too large to give whole and was kept in a file: give the file's path as the result named it, "+
			"the offset of the first byte to read, and how many bytes (at most %d a read). The answer says which bytes and lines it holds, and the offset to read next.", n),
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"the file, as the result named it"},`+
			`"offset":{"type":"integer","minimum":0,"description":"the first byte to read (default 0)"},`+
			`"length":{"type":"integer","minimum":1,"description":"how many bytes to read (default and at most %d)"}},"required":["path"]}`, n)),
	}
}

// runReadResult answers a call of the read tool.
func (a *Agent) runReadResult(use Block) (*mcp.CallToolResult, error) {
	var in struct {
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
		Length int64  `json:"length"`
	}
	if err := json.Unmarshal(use.Input, &in); err != nil || in.Path == "" {
		return nil, errors.New(`give the "path" of a kept result, and optionally "offset" and "length" in bytes`)
	}
	limit := int64(a.maxReadBytes())
	if in.Length <= 0 || in.Length > limit {
		in.Length = limit
	}
	s := a.results
	if s == nil {
		return nil, errNotKept
	}
	text, start, end, kept, err := s.read(in.Path, in.Offset, in.Length)
	if err != nil {
		return nil, err
	}
	first, err := s.lineAt(in.Path, kept, start)
	if err != nil {
		return nil, err
	}
	last := first + strings.Count(text, "\n")
	if strings.HasSuffix(text, "\n") && last > first {
		last--
	}
	next := fmt.Sprintf("next offset %d", end)
	if end >= kept.size {
		next = "that is the end of the file"
	}
	return Text(fmt.Sprintf("[bytes %d to %d of %d (lines %d to %d of %d) of %s; %s]\n%s",
		start, end-1, kept.size, first, last, kept.lines, in.Path, next, text)), nil
}
