package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// The _meta keys of the modern revision.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// On a stream without per-request status (stdio), a legacy server may not
// answer a request it does not know before initialize at all, and a
// server that is still starting answers nothing yet: the two look alike.
// So the probe races: server/discover and ping go out together; a ping
// answered while discover is not (pingGrace later) means a live server
// that ignored discover, and nothing answered within probeTimeout means
// initialize is sent beside the pending discover. A slow modern server's
// late discover answer is used, never dropped, and the probe is bounded
// only by the Connect ctx. A slow dual-era server reads both at once and
// may answer initialize first (its handlers run concurrently): when it
// was silent until then, its discover answer is awaited for pingGrace
// more, and a DiscoverResult within it is preferred.
var (
	probeTimeout = 3 * time.Second
	// httpProbeTimeout bounds server/discover over HTTP, where the server
	// is up once it answers at all: a legacy server that holds an unknown
	// method's SSE stream open is taken as legacy past it.
	httpProbeTimeout = 10 * time.Second
	pingGrace        = 200 * time.Millisecond
)

// errNoDiscoverAnswer: server/discover went unanswered within its bound,
// as a legacy server may leave it.
var errNoDiscoverAnswer = errors.New("no answer to server/discover")

// discoverResult is the answer to server/discover.
type discoverResult struct {
	SupportedVersions []string            `json:"supportedVersions"`
	Capabilities      *ServerCapabilities `json:"capabilities"`
	Instructions      string              `json:"instructions,omitempty"`
	Meta              struct {
		ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// unsupportedVersion returns the versions an UnsupportedProtocolVersionError
// names, if err is one.
func unsupportedVersion(err error) ([]string, bool) {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeUnsupportedProtocolVersion {
		return nil, false
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	json.Unmarshal(e.Data, &data)
	return data.Supported, true
}

// modernError reports whether err is a JSON-RPC error that only a modern
// server sends: such a server is not to be taken for a legacy one.
func modernError(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// choose picks the newest version both sides speak: of ours, the first the
// server lists. Pinned, when set, is the only one it may pick.
func choose(server []string, pinned string) (string, bool) {
	for _, v := range supportedVersions {
		if (pinned == "" || v == pinned) && slices.Contains(server, v) {
			return v, true
		}
	}
	return "", false
}

// handshake agrees on a protocol version with the server, as the spec's
// backward-compatibility rules say: a server/discover probe with the
// preferred modern version; a DiscoverResult or a modern error means a
// modern server (an UnsupportedProtocolVersionError is retried once with a
// version it lists); any other error, or no answer within probeTimeout,
// means a legacy server, which gets the initialize handshake. A version
// pinned in Options skips what it rules out.
func (c *Connection) handshake(ctx context.Context) error {
	pinned := c.opts.ProtocolVersion
	if pinned != "" && !slices.Contains(supportedVersions, pinned) {
		return fmt.Errorf("mcp: Options.ProtocolVersion %q is not one this client speaks (%v)", pinned, supportedVersions)
	}
	if pinned != "" && !isModern(pinned) {
		return c.initialize(ctx, pinned)
	}
	cache, _ := c.stream.Stream.(eraCache)
	if cache != nil && pinned == "" && cache.knownEra() == eraLegacy {
		// This origin answered as a legacy server before: no probe, unless
		// the assumption fails.
		err := c.initialize(ctx, LatestLegacyVersion)
		if err == nil || !modernError(err) || ctx.Err() != nil {
			return err
		}
		cache.rememberEra("")
	}
	defer func() { // only a legacy server is worth remembering: a modern one is probed anyway
		if v := c.InitializeResult().ProtocolVersion; cache != nil && v != "" {
			if isModern(v) {
				cache.rememberEra("")
			} else {
				cache.rememberEra(eraLegacy)
			}
		}
	}()
	version := LatestProtocolVersion
	if pinned != "" {
		version = pinned
	}
	for attempt := 0; ; attempt++ {
		var err error
		if attempt == 0 && pinned == "" && !c.overHTTP() {
			var done bool
			if done, err = c.race(ctx, version); done {
				return err
			}
		} else {
			err = c.discover(ctx, version)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		if supported, ok := unsupportedVersion(err); ok && attempt == 0 {
			v, ok := choose(supported, pinned)
			switch {
			case !ok:
				return &VersionError{Version: fmt.Sprint(supported)}
			case isModern(v):
				version = v
				continue
			default: // a server that lists only legacy versions of ours
				return c.initialize(ctx, v)
			}
		}
		var vErr *VersionError
		if pinned != "" || modernError(err) || errors.As(err, &vErr) {
			return err
		}
		if errors.Is(err, ErrClosed) || authorizationFailed(err) || unreachable(err) {
			return err // initialize would meet the same refusal, or no server at all
		}
		c.logger.Debug("mcp: speaking the legacy protocol", "version", LatestLegacyVersion, "reason", "server/discover failed: "+err.Error())
		return c.initialize(ctx, LatestLegacyVersion)
	}
}

// unreachable reports whether err is a failure to reach the server at all
// (a refused or failed connection, an unknown host), which says nothing of
// its era.
func unreachable(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr)
}

// eraLegacy is what eraCache keeps for a server that spoke only legacy.
const eraLegacy = "legacy"

// race is the first probe of a stream without per-request status, nothing
// pinned: see probeTimeout. done reports that the handshake is over, with
// err its outcome (nil: spoken in the era the server chose); otherwise
// err is a modern server's refusal of version for the caller to act on.
func (c *Connection) race(ctx context.Context, version string) (done bool, err error) {
	c.setVersion(version)
	probes, stop := context.WithCancel(ctx) // ends the waits of the probes not used
	defer stop()
	discover := c.async(probes, "server/discover", nil)
	ping := c.async(probes, "ping", nil)
	timer := time.NewTimer(probeTimeout)
	defer timer.Stop()
	var init chan asyncAnswer // the initialize sent beside discover, if it was
	var initSent bool
	var initErr error          // its refusal, while discover may still answer
	var held *InitializeResult // its acceptance, while discover may still answer
	silent := true             // nothing answered before initialize was sent
	why := "no answer to server/discover within " + probeTimeout.String()
	sendInit := func() {
		if !initSent {
			initSent = true
			c.setVersion("")
			init = c.async(probes, "initialize", c.initializeParams(LatestLegacyVersion))
		}
	}
	speakLegacy := func(res *InitializeResult) (bool, error) {
		c.logger.Debug("mcp: speaking the legacy protocol", "version", res.ProtocolVersion, "reason", why)
		return true, c.initialized(ctx, res)
	}
	for {
		select {
		case a := <-discover:
			discover = nil
			var res discoverResult
			if a.err == nil {
				a.err = c.decode("server/discover", a.raw, &res)
			}
			listed := res.SupportedVersions
			if supported, ok := unsupportedVersion(a.err); ok {
				listed = supported
			}
			if v, ok := choose(listed, c.opts.ProtocolVersion); ok && !isModern(v) && initSent {
				// Legacy only, and the initialize that would follow is
				// under way already: its answer decides.
				why = "server/discover lists only legacy versions"
				if held != nil {
					return speakLegacy(held)
				}
				continue
			}
			if a.err == nil {
				if a.err = c.discovered(ctx, version, &res); a.err == nil {
					c.logger.Debug("mcp: speaking the modern protocol", "version", c.InitializeResult().ProtocolVersion, "reason", "the server answered server/discover")
					return true, nil
				}
				if !errors.Is(a.err, errNotDiscover) {
					return true, a.err
				}
			}
			if _, ok := unsupportedVersion(a.err); ok || modernError(a.err) {
				c.setVersion("")
				return false, a.err // a modern server: initialize, if sent, will be refused
			}
			if errors.Is(a.err, ErrClosed) || ctx.Err() != nil {
				return true, a.err
			}
			why = "server/discover failed: " + a.err.Error()
			switch {
			case held != nil:
				return speakLegacy(held)
			case initErr != nil:
				return true, initErr
			}
			sendInit()
		case <-ping:
			ping = nil
			if !initSent {
				silent = false
			}
			if discover != nil && !initSent {
				// Alive, and discover is not answered: a server that
				// handles requests in order ignored it.
				why = "the server answered ping, not server/discover"
				timer.Reset(pingGrace)
			}
		case <-timer.C:
			if held != nil { // discover stayed unanswered
				return speakLegacy(held)
			}
			sendInit()
		case a := <-init:
			init = nil
			if a.err == nil {
				var res InitializeResult
				if a.err = c.decode("initialize", a.raw, &res); a.err == nil {
					if discover == nil || !silent {
						return speakLegacy(&res)
					}
					held = &res
					timer.Reset(pingGrace)
					continue
				}
			}
			initErr = wrap("initialize", a.err)
			if discover == nil || errors.Is(a.err, ErrClosed) {
				return true, initErr
			}
			// Refused: the server may have taken discover for its
			// handshake and answer it yet.
		case <-ctx.Done():
			c.setVersion("")
			// The ctx's end is the limit that was reached; why is only
			// what made the handshake fall back to initialize.
			what := "server/discover unanswered"
			if initSent {
				what = "server/discover and initialize unanswered; initialize was sent as " + why
			}
			return true, fmt.Errorf("mcp: no handshake answered before the end of the Connect ctx (%s): %w", what, context.Cause(ctx))
		}
	}
}

// asyncAnswer is the answer to a request sent by async.
type asyncAnswer struct {
	raw []byte
	err error
}

// async sends a request now and returns where its answer arrives (once;
// nothing arrives after ctx ends). Unlike call, an abandoned request is
// not cancelled at the server: the handshake's probes are simply left.
func (c *Connection) async(ctx context.Context, method string, params any) chan asyncAnswer {
	out := make(chan asyncAnswer, 1)
	id := c.nextID.Add(1)
	end := func(error) {}
	var extra []byte
	if o := c.opts.Observer; o != nil {
		var meta map[string]string
		var finish func(Outcome)
		op := c.operation(method, id, params)
		op.Probe = method == "server/discover" || method == "ping" // the race's probes; initialize is not one
		ctx, meta, finish = o.StartOperation(ctx, op)
		extra, end = jsonrpc.AppendMeta(nil, meta), func(err error) { finish(Outcome{Err: err}) }
	}
	pc, err := c.pending.Add(id)
	if err == nil {
		if err = c.sendWith(ctx, id, method, params, nil, extra); err != nil && c.pending.Remove(id) {
			c.pending.Release(pc)
		}
	}
	if err != nil {
		out <- asyncAnswer{err: c.mapError(method, err)}
		end(err)
		return out
	}
	c.probes.Add(1) // only the handshake makes probes: before Close can wait
	go func() {
		defer c.probes.Done()
		r, err := c.stream.await(ctx, pc)
		switch {
		case err != nil:
			if c.pending.Remove(id) {
				c.pending.Release(pc)
			}
			end(err)
			return
		case r.Err != nil:
			err = c.mapError(method, r.Err)
			out <- asyncAnswer{err: err}
		default:
			out <- asyncAnswer{raw: r.Result}
		}
		end(err)
		c.pending.Release(pc)
	}()
	return out
}

// discover probes with server/discover at version and, on a DiscoverResult,
// makes the Connection modern. Over HTTP every request has an answer, so
// the probe is bounded by ctx alone, as it is with a pinned version.
func (c *Connection) discover(ctx context.Context, version string) error {
	c.setVersion(version)
	var res discoverResult
	pctx, cancel := context.WithTimeoutCause(ctx, httpProbeTimeout, errNoDiscoverAnswer)
	err := c.call(context.WithValue(pctx, probeKey{}, true), "server/discover", nil, &res)
	cancel()
	if err != nil {
		c.setVersion("")
		if ctx.Err() == nil && errors.Is(context.Cause(pctx), errNoDiscoverAnswer) {
			return fmt.Errorf("%w within %v", errNoDiscoverAnswer, httpProbeTimeout)
		}
		return err
	}
	return c.discovered(ctx, version, &res)
}

// discovered acts on the DiscoverResult res, the answer to a probe at
// version.
func (c *Connection) discovered(ctx context.Context, version string, res *discoverResult) error {
	if len(res.SupportedVersions) == 0 { // no version to speak: a legacy server answering anything, or nothing in common
		c.setVersion("")
		return errNotDiscover
	}
	v, ok := choose(res.SupportedVersions, c.opts.ProtocolVersion)
	switch {
	case slices.Contains(res.SupportedVersions, version):
		v = version
	case !ok:
		c.setVersion("")
		return &VersionError{Version: fmt.Sprint(res.SupportedVersions)}
	case !isModern(v):
		c.setVersion("")
		err := c.initialize(ctx, v)
		var rpcErr *Error
		if err != nil && errors.As(err, &rpcErr) && ctx.Err() == nil {
			// Some servers take server/discover for the handshake and then
			// refuse initialize as a duplicate: what discover said stands.
			c.logger.Debug("mcp: initialize after server/discover refused; keeping what discover said", "err", err)
			c.setInit(res.initializeResult(v))
			return nil
		}
		return err
	}
	c.setVersion(v)
	c.setInit(res.initializeResult(v))
	return nil
}

// renegotiate agrees on another version after a request was refused with
// an UnsupportedProtocolVersionError listing supported: a modern one is
// spoken from now on; a legacy one means the initialize handshake, now.
func (c *Connection) renegotiate(ctx context.Context, supported []string) error {
	c.negotiating.Lock()
	defer c.negotiating.Unlock()
	current := c.meta.Load()
	if current == nil || slices.Contains(supported, current.version) {
		return nil // another request renegotiated meanwhile
	}
	v, ok := choose(supported, c.opts.ProtocolVersion)
	switch {
	case !ok:
		return &VersionError{Version: fmt.Sprint(supported)}
	case isModern(v):
		c.setVersion(v)
		init := c.InitializeResult()
		init.ProtocolVersion = v
		c.setInit(init)
		return nil
	}
	c.logger.Info("mcp: the server refused the modern protocol for requests; speaking the legacy one", "version", v)
	c.setVersion("")
	return c.initialize(ctx, v)
}

// initializeResult is what a DiscoverResult says, as InitializeResult
// holds it, for version v.
func (r *discoverResult) initializeResult(v string) InitializeResult {
	init := InitializeResult{ProtocolVersion: v, Instructions: r.Instructions}
	if r.Capabilities != nil {
		init.Capabilities = *r.Capabilities
	}
	if r.Meta.ServerInfo != nil {
		init.ServerInfo = *r.Meta.ServerInfo
	}
	return init
}

func (c *Connection) setInit(init InitializeResult) {
	c.initMu.Lock()
	c.init = init
	c.toolTasks.Store(offersToolTasks(init.Capabilities.Tasks))
	c.initMu.Unlock()
}

// errNotDiscover is an answer to server/discover that is no DiscoverResult.
var errNotDiscover = errors.New("mcp: server/discover: the answer names no supportedVersions")

// initialize runs the legacy handshake offering version.
func (c *Connection) initialize(ctx context.Context, version string) error {
	var res InitializeResult
	if err := c.call(ctx, "initialize", c.initializeParams(version), &res); err != nil {
		return wrap("initialize", err)
	}
	return c.initialized(ctx, &res)
}

func (c *Connection) initializeParams(version string) initializeParams {
	return initializeParams{
		ProtocolVersion: version,
		Capabilities:    c.opts.capabilities(),
		ClientInfo:      c.clientInfo(),
	}
}

// initialized ends the legacy handshake that res answered.
func (c *Connection) initialized(ctx context.Context, res *InitializeResult) error {
	if !slices.Contains(supportedVersions, res.ProtocolVersion) || isModern(res.ProtocolVersion) {
		return &VersionError{Version: res.ProtocolVersion}
	}
	c.setInit(*res)
	if err := c.Notify(context.WithValue(ctx, awaitedKey{}, true), "notifications/initialized", nil); err != nil {
		return wrap("initialized", err)
	}
	return nil
}

func (c *Connection) clientInfo() Implementation {
	if c.opts.ClientInfo != nil {
		return *c.opts.ClientInfo
	}
	return Implementation{Name: "mcplug", Version: Version}
}

// An era is what the protocol's two eras do differently: legacy (the
// initialize handshake) and modern (per-request metadata). The handshake
// picks one per Connection (a refused version may change it); the
// features ask c.era() and read in one era each.
type era interface {
	// requestMeta is what every request adds to its _meta: members
	// without the braces, nil for none.
	requestMeta() []byte
	ping(ctx context.Context, c *Connection) error
	setLoggingLevel(ctx context.Context, c *Connection, level LoggingLevel) error
	subscribe(ctx context.Context, c *Connection, params *SubscribeParams, on bool) error
	// rootsChanged tells the server that SetRoots changed the roots.
	rootsChanged(ctx context.Context, c *Connection) error
	// listen opens, restarts or ends subscriptions/listen for what the
	// Connection follows now.
	listen(c *Connection)

	// keepTools keeps a complete tools/list (as of generation gen, its
	// pages' shortest ttl) as long as it stays true.
	keepTools(c *Connection, tools []Tool, gen uint64, ttl time.Duration)
	// mirrorsToolHeaders reports whether a tool call's x-mcp-header
	// arguments go in HTTP headers too.
	mirrorsToolHeaders(c *Connection) bool
	// roundTrip sends a request and returns its complete raw result,
	// answering what the server asks for meanwhile within budget (made
	// when the server first asks, if nil; returned).
	roundTrip(ctx context.Context, c *Connection, method string, params any, budget *inputBudget) ([]byte, *inputBudget, error)

	// needsTask reports whether a call to the tool must ask for a task.
	needsTask(ctx context.Context, c *Connection, name string) bool
	// taskCall is the params of a call that StartToolTask makes a task.
	taskCall(ctx context.Context, c *Connection, name string, arguments []byte) (any, error)
	// callResult is the result of a tools/call, the task it started (asked
	// for or not) followed to its end.
	callResult(ctx context.Context, c *Connection, raw []byte, asked bool, progress func(Progress), budget *inputBudget) ([]byte, error)
	// unaskedTask is the result of a call whose result res came empty.
	unaskedTask(ctx context.Context, c *Connection, raw []byte, res *CallToolResult, progress func(Progress), budget *inputBudget) (*CallToolResult, error)
	// handleShapes reports whether a task handle may have the 2025-11-25
	// shape ("task" member) besides resultType "task".
	handleShapes() bool
	// inputByResult reports whether a task waiting for input is followed
	// by its result request, which carries the server's requests.
	inputByResult() bool
	tasks(ctx context.Context, c *Connection) ([]*Task, error)
	// taskResult is the raw result of the task t, which has ended (or,
	// with inputByResult, waits for input).
	taskResult(ctx context.Context, t *Task) ([]byte, error)
	// servedTask is the task a server request asks to be run as, if any.
	servedTask(c *Connection, req *request) *taskRequest
	// elicitationIDs reports whether a url-mode elicitation must carry
	// an elicitationId.
	elicitationIDs() bool
}

// era is the era the Connection speaks now.
func (c *Connection) era() era {
	if m := c.meta.Load(); m != nil {
		return m
	}
	return legacy{}
}

// setVersion makes the Connection speak version from now on ("" for
// legacy: no _meta is added). The _meta members are encoded here, once,
// not per request.
func (c *Connection) setVersion(version string) {
	if hw := c.stream.headers; hw != nil {
		hw.setProtocolVersion(version, version != "" && isModern(version))
	}
	if version == "" || !isModern(version) {
		c.meta.Store(nil)
		return
	}
	c.meta.Store(c.buildMeta(version, c.logLevel()))
}

// callHeaders carries the headers of one request through its ctx.
type callHeaders struct{}

func withHeaders(ctx context.Context, h http.Header) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, callHeaders{}, h)
}

func headersFrom(ctx context.Context) http.Header {
	h, _ := ctx.Value(callHeaders{}).(http.Header)
	return h
}

// overHTTP reports whether the Connection's stream is Streamable HTTP.
func (c *Connection) overHTTP() bool {
	return c.stream.headers != nil
}

func (c *Connection) buildMeta(version string, level LoggingLevel) *modern {
	b := []byte(`"` + metaProtocolVersion + `":`)
	b = jsonrpc.AppendString(b, version)
	caps, _ := json.Marshal(c.opts.modernCapabilities())
	b = append(b, `,"`+metaClientCapabilities+`":`...)
	b = append(b, caps...)
	info, _ := json.Marshal(c.clientInfo())
	b = append(b, `,"`+metaClientInfo+`":`...)
	b = append(b, info...)
	if level != "" {
		b = append(b, `,"`+metaLogLevel+`":`...)
		b = jsonrpc.AppendString(b, string(level))
	}
	return &modern{version: version, fields: sharedMeta(b)}
}

// metas are the request metadata of the modern connections, shared by
// those whose metadata is the same (as a program's connections are): an
// idle connection then keeps none of its own. At most maxMetas are kept.
var metas struct {
	sync.Mutex
	m map[string][]byte
}

const maxMetas = 256

// sharedMeta returns the shared copy of b, which nobody writes to.
func sharedMeta(b []byte) []byte {
	metas.Lock()
	defer metas.Unlock()
	if shared, ok := metas.m[string(b)]; ok {
		return shared
	}
	if metas.m == nil || len(metas.m) >= maxMetas {
		metas.m = map[string][]byte{}
	}
	b = slices.Clip(b)
	metas.m[string(b)] = b
	return b
}

// Modern reports whether the Connection speaks a modern protocol version
// (2026-07-28 or later) with its server.
func (c *Connection) Modern() bool { return c.meta.Load() != nil }

// logLevel is the level set with SetLoggingLevel on a modern server.
func (c *Connection) logLevel() LoggingLevel {
	if l := c.level.Load(); l != nil {
		return *l
	}
	return ""
}

// metaState is the Connection's modern-era state.
type metaState struct {
	meta        atomic.Pointer[modern] // nil: legacy
	level       atomic.Pointer[LoggingLevel]
	negotiating sync.Mutex
}

// isModern reports whether protocol version v is of the modern era
// (after LatestLegacyVersion).
func isModern(v string) bool { return v >= "2026-07-28" }

// inputBudget is what the input of one call may still cost; the zero
// value is a whole budget. It is safe for concurrent use.
type inputBudget struct {
	mu      sync.Mutex
	rounds  int
	answers int
}

// offersToolTasks reads tasks.requests.tools.call in a tasks capability.
func offersToolTasks(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var caps struct {
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	return json.Unmarshal(raw, &caps) == nil && caps.Requests.Tools.Call != nil
}
