package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcplug/mcplug/mcp"
)

// ErrMaxSteps is returned by Chat when the model kept calling tools for
// MaxSteps steps.
var ErrMaxSteps = errors.New("agent: too many steps without a final answer (raise MaxSteps)")

// Defaults of an Agent's zero fields.
const (
	DefaultMaxSteps       = 20
	DefaultMaxResultBytes = 100_000
	DefaultMaxImageBytes  = 5 << 20 // base64 bytes of one image
	DefaultMaxImages      = 8       // images of one tool result
	// DefaultMaxRequestBytes bounds what tool results add to one model
	// request: under the Messages API's 32 MB request limit, with room
	// for the rest of the request.
	DefaultMaxRequestBytes = 24 << 20
)

// Agent runs a conversation with a Model that may call tools.
type Agent struct {
	Model  Model
	System string

	// Tools are listed before every model turn, not before the first
	// Chat: a Manager among them starts its servers then, and a server
	// whose tools change (notifications/tools/list_changed) offers its new
	// list on the next turn. A name two providers claim is an error.
	Tools []ToolProvider

	// MaxSteps bounds the model calls of one Chat. Zero means
	// DefaultMaxSteps.
	MaxSteps int

	// MaxResultTokens bounds the text of one tool result, in tokens
	// (four bytes a token, or, when that leaves it in doubt, counted by
	// CountTokens or by the Model, a TokenCounter): past it, the whole
	// text is kept in a file (see ResultDir) and the model gets its head,
	// the file's path, size and line count, and a tool to read any range
	// of it (ReadResultToolName). Zero means $MAX_MCP_OUTPUT_TOKENS, else
	// DefaultMaxResultTokens (25,000, Claude Code's); a negative value
	// keeps no file, and cuts the text at MaxResultBytes instead.
	MaxResultTokens int
	// CountTokens, if set, counts a text's tokens as the model does; it
	// is asked only when four bytes a token leave it in doubt (between
	// half and four times MaxResultTokens), as Claude Code asks the API;
	// a count of zero or less leaves the estimate. Without it, a Model
	// that is a TokenCounter is asked.
	CountTokens func(text string) int
	// ResultDir is where the Agent makes its folder for the results it
	// keeps in files (os.MkdirTemp: mode 0700, each file 0600; at most
	// DefaultMaxKeptBytes together); empty means os.TempDir(). Close
	// removes the folder.
	ResultDir string

	// MaxResultBytes bounds the text of a tool call's error, and of a
	// result that cannot be kept in a file; a longer one is cut and ends
	// with a marker saying so. Zero means DefaultMaxResultBytes.
	MaxResultBytes int

	// MaxImageBytes bounds one image (its base64 data) and MaxImages the
	// images of one result passed to a model that takes images: a larger
	// image is scaled down until it fits, one past MaxImages reaches the
	// model as a one-line summary. MaxImageSide bounds its width and
	// height (it is scaled down to fit), MaxImagePixels what it may have
	// to be decoded at all. Zero means DefaultMaxImageBytes,
	// DefaultMaxImages, DefaultMaxImageSide and DefaultMaxImagePixels.
	MaxImageBytes  int
	MaxImages      int
	MaxImageSide   int
	MaxImagePixels int

	// MaxInstructions bounds the section of the servers' instructions
	// (see InstructionsProvider), in characters; zero means
	// DefaultMaxInstructions.
	MaxInstructions int

	// MaxRequestBytes bounds what the conversation's tool results add to
	// one model request: their text (as JSON, escapes counted) and images
	// (base64), summed over the whole history, which every request
	// carries. Before each request past it, the oldest images, then the
	// oldest texts, are replaced in the history by a one-line note the
	// model can read, until it fits. Zero means DefaultMaxRequestBytes.
	MaxRequestBytes int

	// Observer, if set, sees each Chat, model turn and tool call (package
	// otelmcp traces them); the ctx it returns for a tool call is the one
	// the tool is called with, so the MCP request is its child.
	Observer Observer

	// Output receives the transcript: "  → name(args)" before each tool
	// call, and the model's text as it streams. Nil discards it.
	Output io.Writer

	// ToolSearch defers tools behind a search (see ToolSearch); the zero
	// value sends every definition on every turn.
	ToolSearch ToolSearch

	// Sections are asked, in order, before every model turn for the
	// parts of the system prompt that do not come from the program (see
	// PromptSection): the index of the servers' skills (Skills), say.
	// They reach the Model in Request.Sections, never joined to System.
	Sections []PromptSection

	// ToolSchemas says what becomes of a tool whose input schema the
	// Model refuses (see ToolSchemaOptions); nil means the defaults: one
	// that starts with anyOf, oneOf or allOf is flattened into one
	// object, as Claude Code does.
	ToolSchemas *ToolSchemaOptions

	history  []Message
	tools    *toolSet
	deferred []mcp.Tool // of this turn
	search   searchState

	checked     map[string]checkedTool // tool schemas checked, by name
	results     *resultStore           // results kept in files; a SubAgent shares its parent's
	ownsResults bool                   // Close removes results
	checkers    []CallChecker          // a SubAgent's: its parent's
}

// An Observer sees an Agent's work, for tracing (otelmcp.Observer is
// one). Its methods return the ctx the work runs under and a function
// called once when it ends.
type Observer interface {
	// StartChat is called as Chat begins; end gets Chat's error.
	StartChat(ctx context.Context) (context.Context, func(err error))
	// StartTurn is called before each model request of a Chat, step
	// counting from 1.
	StartTurn(ctx context.Context, step int) (context.Context, func(err error))
	// StartToolCall is called before a tool the model asked for is
	// called; end gets whether its result is an error result, and the
	// call's error. name is "" when the agent has no tool of the name the
	// model gave: a model's invention is not a name to record.
	StartToolCall(ctx context.Context, name string) (context.Context, func(isError bool, err error))
}

// SubAgent returns an agent for a delegated task: the same model and
// limits, a fresh conversation, and only the given tools (none of this
// agent's providers, so it never starts MCP servers of its own). The
// results it keeps in files are this agent's: this agent's Close removes
// them. Its calls are checked by this agent's CallCheckers too (see
// CallChecker), then by those among tools: a skill this agent's model
// acts on gates the code the sub-agent runs.
func (a *Agent) SubAgent(system string, tools ...ToolProvider) *Agent {
	return &Agent{
		Model:           a.Model,
		System:          system,
		Tools:           tools,
		MaxSteps:        a.MaxSteps,
		MaxResultTokens: a.MaxResultTokens,
		CountTokens:     a.CountTokens,
		ResultDir:       a.ResultDir,
		MaxResultBytes:  a.MaxResultBytes,
		MaxImageBytes:   a.MaxImageBytes,
		MaxImages:       a.MaxImages,
		MaxImageSide:    a.MaxImageSide,
		MaxImagePixels:  a.MaxImagePixels,
		MaxInstructions: a.MaxInstructions,
		MaxRequestBytes: a.MaxRequestBytes,
		Observer:        a.Observer,
		Output:          a.Output,
		ToolSearch:      a.ToolSearch,
		ToolSchemas:     a.ToolSchemas,
		results:         a.store(),
		checkers:        a.callCheckers(),
	}
}

// History returns the conversation so far.
func (a *Agent) History() []Message { return a.history }

// Chat adds userText to the conversation and runs the loop until the model
// answers without calling a tool, returning that answer. Every tool call
// gets a result in the history, also when Chat returns an error.
//
// The Response's StopReason steers the loop: a reply cut off at the
// model's limit (StopMaxTokens, StopContextWindow) ends the Chat with
// ErrTruncated and a refusal (StopRefusal) with ErrRefused, each with the
// text the model gave, and their tool calls are not run; a paused turn
// (StopPauseTurn) is sent back to the model as it is, for its turn to go
// on (it counts as a step).
func (a *Agent) Chat(ctx context.Context, userText string) (answer string, err error) {
	if a.Observer != nil {
		var end func(error)
		ctx, end = a.Observer.StartChat(ctx)
		defer func() { end(err) }()
	}
	return a.chat(ctx, userText)
}

func (a *Agent) chat(ctx context.Context, userText string) (string, error) {
	a.history = append(a.history, Message{Role: RoleUser, Content: []Block{{Type: BlockText, Text: userText}}})
	maxSteps := a.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	out := a.Output
	if out == nil {
		out = io.Discard
	}
	for step := range maxSteps {
		ts, err := loadTools(ctx, a.Tools)
		if err != nil {
			return "", err
		}
		a.tools = ts
		a.fitHistory()
		offered, refused := a.usable(ts.tools)
		sections, err := a.sections(ctx)
		if err != nil {
			return "", err
		}
		req := &Request{System: a.System, Messages: slices.Clone(a.history)} // the Model may keep it: nothing in it changes later
		loaded, deferred := a.split(offered)
		a.deferred = deferred
		switch sm, native := a.Model.(SearchingModel); {
		case len(deferred) == 0:
			req.Tools = offered
		case native && sm.SearchesTools():
			req.Tools, req.Deferred = loaded, deferred
		default:
			req.Tools = append(slices.Clip(loaded), searchTool)
		}
		req.Tools, req.Deferred = a.capDescriptions(req.Tools, false), a.capDescriptions(req.Deferred, true)
		if _, theirs := ts.routes[ReadResultToolName]; a.results.has() && !theirs {
			req.Tools = append(slices.Clip(req.Tools), a.readResultTool())
		}
		// The agent's own sections, then those of Agent.Sections.
		req.Sections = slices.Concat(a.ownSections(refused), a.deferredSections(deferred), sections)
		wrote := false
		tctx, endTurn := ctx, func(error) {}
		if a.Observer != nil {
			tctx, endTurn = a.Observer.StartTurn(ctx, step+1)
		}
		resp, err := a.Model.Generate(tctx, req,
			func(text string) {
				if text != "" {
					wrote = true
					io.WriteString(out, text)
				}
			})
		endTurn(err)
		if err != nil {
			return "", fmt.Errorf("agent: model: %w", err)
		}
		a.history = append(a.history, Message{Role: RoleAssistant, Content: resp.Content})
		a.foundByModel(resp.Content)
		if err := stopError(resp.StopReason); err != nil {
			if wrote {
				io.WriteString(out, "\n")
			}
			if results := notRun(resp.Content, err); len(results) > 0 {
				a.history = append(a.history, Message{Role: RoleUser, Content: results})
			}
			return resp.Text(), err
		}
		var results []Block
		for _, b := range resp.Content {
			if b.Type == BlockServerToolUse { // the model's own search
				fmt.Fprintf(out, "  → %s(%s)\n", b.Name, compact(b.Input))
			}
			if b.Type != BlockToolUse {
				continue
			}
			if wrote {
				io.WriteString(out, "\n")
				wrote = false
			}
			fmt.Fprintf(out, "  → %s(%s)\n", b.Name, compact(b.Input))
			results = append(results, a.callTool(ctx, b))
		}
		if len(results) == 0 && resp.StopReason == StopPauseTurn {
			continue // the turn goes on: the reply goes back as it is
		}
		if len(results) == 0 {
			if wrote {
				io.WriteString(out, "\n")
			}
			return resp.Text(), nil
		}
		a.history = append(a.history, Message{Role: RoleUser, Content: results})
	}
	return "", ErrMaxSteps
}

// callTool runs one tool call; every failure becomes an error result.
func (a *Agent) callTool(ctx context.Context, use Block) Block {
	if a.Observer == nil {
		return a.runTool(ctx, use, nil)
	}
	name := use.Name
	if _, ok := a.tools.routes[name]; !ok && !(name == SearchToolName && len(a.deferred) > 0) && !(name == ReadResultToolName && a.results.has()) {
		name = ""
	}
	ctx, end := a.Observer.StartToolCall(ctx, name)
	var callErr error
	result := a.runTool(ctx, use, &callErr)
	end(result.IsError, callErr)
	return result
}

// runTool is callTool; callErr, when set, gets the call's error.
func (a *Agent) runTool(ctx context.Context, use Block, callErr *error) Block {
	result := Block{Type: BlockToolResult, ToolUseID: use.ID}
	fail := func(err error) Block {
		result.IsError = true
		result.Content = []Block{{Type: BlockText, Text: a.truncate("Error: " + err.Error())}}
		return result
	}
	p, ok := a.tools.routes[use.Name]
	search := !ok && use.Name == SearchToolName && len(a.deferred) > 0
	readResult := !ok && use.Name == ReadResultToolName && a.results.has()
	if !ok && !search && !readResult {
		return fail(fmt.Errorf("%w %q", ErrUnknownTool, use.Name))
	}
	args := use.Input
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := a.checkCall(ctx, use.Name, args); err != nil {
		if callErr != nil {
			*callErr = err
		}
		return fail(err)
	}
	if search {
		res, err := a.runSearch(use, a.deferred)
		if err != nil {
			return fail(err)
		}
		result.Content = a.resultBlocks(ctx, "", res)
		return result
	}
	if readResult {
		res, err := a.runReadResult(use)
		if err != nil {
			return fail(err)
		}
		result.Content = a.resultBlocks(ctx, "", res)
		return result
	}
	res, err := p.CallTool(ctx, use.Name, args)
	if err != nil {
		if callErr != nil {
			*callErr = err
		}
		return fail(err)
	}
	if res == nil {
		return fail(errors.New("tool returned no result"))
	}
	result.IsError = res.IsError
	result.Content = a.resultBlocks(ctx, use.Name, res)
	return result
}

// checkCall asks the agent's CallCheckers about a call, in order: the
// first error refuses it.
func (a *Agent) checkCall(ctx context.Context, name string, args json.RawMessage) error {
	for _, c := range a.callCheckers() {
		if err := c.CheckCall(ctx, name, args); err != nil {
			return err
		}
	}
	return nil
}

// callCheckers are the parent's CallCheckers, if a is a SubAgent, then
// those among a.Tools.
func (a *Agent) callCheckers() []CallChecker {
	out := slices.Clip(a.checkers)
	for _, p := range a.Tools {
		if c, ok := p.(CallChecker); ok {
			out = append(out, c)
		}
	}
	return out
}

// resultBlocks turns an MCP result of the tool name into what the model
// sees: text blocks joined, images as images for models that take them,
// everything else summarised as text; the text bounded by
// MaxResultTokens (kept in a file past it; name "" for the Agent's own
// tools, whose results are bounded already), the images by
// MaxImageBytes, MaxImageSide and MaxImages.
func (a *Agent) resultBlocks(ctx context.Context, name string, res *mcp.CallToolResult) []Block {
	images := false
	if im, ok := a.Model.(ImageModel); ok {
		images = im.AcceptsImages()
	}
	maxImageBytes, maxImages, maxSide, maxPixels := a.MaxImageBytes, a.MaxImages, a.MaxImageSide, a.MaxImagePixels
	if maxImageBytes <= 0 {
		maxImageBytes = DefaultMaxImageBytes
	}
	if maxImages <= 0 {
		maxImages = DefaultMaxImages
	}
	if maxSide <= 0 {
		maxSide = DefaultMaxImageSide
	}
	if maxPixels <= 0 {
		maxPixels = DefaultMaxImagePixels
	}
	var texts []string
	var blocks []Block
	for _, c := range res.Content {
		switch c.Type {
		case mcp.ContentText:
			texts = append(texts, c.Text)
		case mcp.ContentImage:
			switch {
			case !images:
				texts = append(texts, fmt.Sprintf("[image: %s, %d bytes base64]", short(c.MimeType), len(c.Data)))
			case len(blocks) >= maxImages:
				texts = append(texts, fmt.Sprintf("[image: %s, %d bytes base64: not shown, past the limit of %d images a result]",
					short(c.MimeType), len(c.Data), maxImages))
			default:
				b, note := fitImage(c, maxSide, maxPixels, maxImageBytes)
				if b != nil {
					blocks = append(blocks, *b)
				}
				if note != "" {
					texts = append(texts, note)
				}
			}
		case mcp.ContentAudio:
			texts = append(texts, fmt.Sprintf("[audio: %s, %d bytes base64]", c.MimeType, len(c.Data)))
		case mcp.ContentResourceLink:
			texts = append(texts, fmt.Sprintf("[resource link: %s %s]", c.URI, c.Name))
		case mcp.ContentResource:
			switch r := c.Resource; {
			case r == nil:
				texts = append(texts, "[resource]")
			case r.Text != nil:
				texts = append(texts, *r.Text)
			case r.Blob != nil:
				texts = append(texts, fmt.Sprintf("[resource: %s %s, %d bytes base64]", r.URI, r.MimeType, len(*r.Blob)))
			default:
				texts = append(texts, fmt.Sprintf("[resource: %s]", r.URI))
			}
		default:
			texts = append(texts, fmt.Sprintf("[%s content]", c.Type))
		}
	}
	format := "plain text"
	if len(texts) == 0 && len(res.StructuredContent) > 0 {
		texts = append(texts, string(res.StructuredContent))
		format = "JSON"
	}
	text := strings.Join(texts, "\n")
	if name != "" {
		text = a.fitText(ctx, name, text, format)
	}
	if text == "" && len(blocks) == 0 {
		text = "(no output)"
	}
	if text != "" {
		blocks = append([]Block{{Type: BlockText, Text: text}}, blocks...)
	}
	return blocks
}

func (a *Agent) truncate(s string) string {
	limit := a.MaxResultBytes
	if limit <= 0 {
		limit = DefaultMaxResultBytes
	}
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: showing %d of %d bytes]", cut, len(s))
}

// fitHistory keeps what the history's tool results weigh within
// MaxRequestBytes: past it, the oldest images, then the oldest texts, are
// replaced by a note, in new slices (a request already made keeps what it
// was sent).
func (a *Agent) fitHistory() {
	limit := a.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	// where is a block of a tool result: history[i].Content[j].Content[k].
	type where struct{ i, j, k int }
	total := 0
	var images, texts []where // oldest first
	for i, m := range a.history {
		for j, b := range m.Content {
			if b.Type != BlockToolResult {
				continue
			}
			for k, c := range b.Content {
				total += weight(c)
				switch c.Type {
				case BlockImage:
					images = append(images, where{i, j, k})
				case BlockText:
					texts = append(texts, where{i, j, k})
				}
			}
		}
	}
	for _, w := range append(images, texts...) {
		if total <= limit {
			return
		}
		c := a.history[w.i].Content[w.j].Content[w.k]
		note := Block{Type: BlockText, Text: fmt.Sprintf("[tool output of %d bytes: dropped from the conversation to keep requests under %d bytes]", len(c.Text), limit)}
		if c.Type == BlockImage {
			note.Text = fmt.Sprintf("[image: %s, %d bytes base64: dropped from the conversation to keep requests under %d bytes]", short(c.MediaType), len(c.Data), limit)
		} else if weight(note) >= weight(c) {
			continue
		}
		total += weight(note) - weight(c)
		m := a.history[w.i]
		m.Content = slices.Clone(m.Content)
		m.Content[w.j].Content = slices.Clone(m.Content[w.j].Content)
		m.Content[w.j].Content[w.k] = note
		a.history[w.i] = m
	}
}

// weight is what a block of a tool result adds to a request: its text as
// a JSON string (escapes counted) or its base64 data.
func weight(b Block) int {
	if b.Type == BlockImage {
		return len(b.Data) + len(b.MediaType)
	}
	n := len(b.Text)
	for i := 0; i < len(b.Text); i++ {
		switch c := b.Text[i]; {
		case c == '"' || c == '\\':
			n++
		case c < 0x20:
			n += 5 // \u00XX
		}
	}
	return n
}

// short bounds a server's label (a MIME type, say) inside a summary.
func short(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
