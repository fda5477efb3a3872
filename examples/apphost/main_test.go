package main

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	testproc.Main()
	os.Exit(m.Run())
}

func TestItServesThePageOfTheConfiguredServersApps(t *testing.T) {
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"app": map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "app"}},
	}})
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "servers.json")
	require.NoError(t, os.WriteFile(cfg, b, 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-config", cfg}, w, &stderr)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan(), "it prints the address")
	addr, ok := strings.CutPrefix(lines.Text(), "apphost: ")
	require.True(t, ok, lines.Text())
	go io.Copy(io.Discard, out)

	res, err := http.Get(addr)
	require.NoError(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	m := regexp.MustCompile(`name="mcplug-host" content="([^"]*)"`).FindSubmatch(page)
	require.NotNil(t, m)
	var pc struct{ Token, SandboxOrigin string }
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &pc))
	assert.Regexp(t, `^http://\*\.localhost:[0-9]+$`, pc.SandboxOrigin, "each server's views run on a name under localhost")
	sandboxPort := strings.TrimPrefix(pc.SandboxOrigin, "http://*.localhost:")

	req, _ := http.NewRequest("GET", addr+"api/tools", nil)
	req.Header.Set("X-Mcplug-Host", pc.Token)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var tools []struct{ Server, Name, ResourceURI string }
	require.NoError(t, json.NewDecoder(res.Body).Decode(&tools))
	res.Body.Close()
	assert.Equal(t, []struct{ Server, Name, ResourceURI string }{{"app", "show", "ui://app/view.html"}}, tools)

	// A view's proxy is served on its server's name under localhost, on
	// the loopback address, as a browser reaches it.
	req, _ = http.NewRequest("POST", addr+"api/views", strings.NewReader(`{"server":"app","tool":"show"}`))
	req.Header.Set("X-Mcplug-Host", pc.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var view struct{ Sandbox string }
	require.NoError(t, json.NewDecoder(res.Body).Decode(&view))
	res.Body.Close()
	require.Regexp(t, `^http://[0-9a-f]{32}\.localhost:`+sandboxPort+`/sandbox/[0-9a-f]+$`, view.Sandbox)
	loopback := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+sandboxPort)
	}}}
	defer loopback.CloseIdleConnections()
	res, err = loopback.Get(view.Sandbox)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors "+strings.TrimSuffix(addr, "/"))

	cancel()
	select {
	case c := <-code:
		assert.Equal(t, 0, c, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("it did not stop")
	}
	assert.Empty(t, testproc.LiveChildren(), "the server process is gone")
}
