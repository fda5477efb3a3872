package mcp

import (
	"net/http"
	"sync"
	"time"
)

// The HTTP transports given no Client share, for each origin (scheme,
// host and port), a client of their own: it keeps up to 256 idle
// connections (net/http's default keeps two, so that 64 goroutines calling
// one server dial for most of their calls) while a connection to that
// origin is open, and closes them idleLinger after the last one closes, so
// that a program that has closed its sessions keeps no sockets open to
// their servers, while one that reconnects at once finds its connection.
// The GET streams, which hold their connection while open, go through a
// transport of small buffers: an idle stream then costs 2 KiB of buffers
// instead of 8.

// idleLinger is how long the idle connections to an origin outlive the
// last connection to it.
const idleLinger = 250 * time.Millisecond

// maxIdlePerHost is how many idle connections a shared client keeps.
const maxIdlePerHost = 256

// originClients are the shared clients in use, by origin.
var originClients struct {
	sync.Mutex
	m map[string]*originClient
}

// originClient is the shared client of one origin.
type originClient struct {
	origin  string
	posts   *http.Client // requests and their answers
	streams *http.Client // GET streams
	// The same, following redirects only within the origin, shared by
	// the connections that add nothing to them (no Authorizer).
	samePosts, sameStreams *http.Client
	users                  int         // connections open through it
	linger                 *time.Timer // set while it has no user: closes its idle connections
}

// newTransport is http.DefaultTransport's settings, keeping maxIdle idle
// connections, with buffers of size bytes (0: net/http's 4 KiB).
func newTransport(maxIdle, size int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = maxIdle, maxIdle
	t.ReadBufferSize, t.WriteBufferSize = size, size
	return t
}

// acquireClient returns the shared client of origin for one more
// connection, and what gives it back when the connection closes, to be
// called once (httpstream's config calls its Release once).
func acquireClient(origin string) (oc *originClient, release func()) {
	originClients.Lock()
	defer originClients.Unlock()
	if originClients.m == nil {
		originClients.m = map[string]*originClient{}
	}
	oc = originClients.m[origin]
	if oc == nil {
		oc = &originClient{origin: origin,
			posts:   &http.Client{Transport: newTransport(maxIdlePerHost, 0)},
			streams: &http.Client{Transport: newTransport(2, 1<<10)},
		}
		oc.samePosts, oc.sameStreams = sameOriginClient(oc.posts, origin), sameOriginClient(oc.streams, origin)
		originClients.m[origin] = oc
	}
	oc.users++
	if oc.linger != nil {
		oc.linger.Stop()
		oc.linger = nil
	}
	return oc, oc.release
}

// release gives back one connection's use of oc; after the last,
// idleLinger later unless it is taken again, its idle connections are
// closed and it is forgotten.
func (oc *originClient) release() {
	originClients.Lock()
	defer originClients.Unlock()
	oc.users--
	if oc.users > 0 {
		return
	}
	var timer *time.Timer
	timer = time.AfterFunc(idleLinger, func() {
		originClients.Lock()
		if oc.linger != timer { // taken again meanwhile
			originClients.Unlock()
			return
		}
		oc.linger = nil
		delete(originClients.m, oc.origin)
		originClients.Unlock()
		oc.posts.CloseIdleConnections()
		oc.streams.CloseIdleConnections()
	})
	oc.linger = timer
}

// closeIdleClients closes the idle connections of every shared client
// (tests).
func closeIdleClients() {
	originClients.Lock()
	defer originClients.Unlock()
	for _, oc := range originClients.m {
		oc.posts.CloseIdleConnections()
		oc.streams.CloseIdleConnections()
	}
}
