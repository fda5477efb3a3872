package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"sync"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// frames is a Stream of a program's own that frames messages itself (one
// per line here; a WebSocket's frames or a queue's records alike) and
// offers them whole: as a MessageReader and a MessageWriter it is read
// and written undecoded, and the Connection decodes each message once.
type frames struct {
	conn net.Conn
	r    *bufio.Reader
	mu   sync.Mutex // one frame written at a time
}

func (s *frames) ReadMessage() ([]byte, error) {
	line, err := s.r.ReadBytes('\n') // a new slice, the caller's to keep
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

func (s *frames) WriteMessage(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.conn.Write(append(append([]byte(nil), msg...), '\n'))
	return err
}

// ReadObject and WriteObject make it a Stream; the Connection does not
// call them.
func (s *frames) ReadObject(v any) error {
	msg, err := s.ReadMessage()
	if err != nil {
		return err
	}
	return json.Unmarshal(msg, v)
}

func (s *frames) WriteObject(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.WriteMessage(b)
}

func (s *frames) Close() error { return s.conn.Close() }

// A transport of the program's own whose Stream hands messages over
// whole (see frames).
func ExampleMessageReader() {
	client, server := net.Pipe()
	go (&mcptest.Server{Name: "framed"}).Serve(server, server)

	t := mcp.TransportFunc(func(context.Context) (mcp.Stream, error) {
		return &frames{conn: client, r: bufio.NewReader(client)}, nil
	})
	ctx := context.Background()
	c, err := mcp.Connect(ctx, t, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "whole messages"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.InitializeResult().ServerInfo.Name, "says:", res.Text())
	// Output:
	// framed says: whole messages
}
