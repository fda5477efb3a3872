package mockllm

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestMockReplaysTurnsInOrder(t *testing.T) {
	s, err := Start(
		Turn{ToolCalls: []ToolCall{{Name: "add", Input: json.RawMessage(`{"a":1}`)}}},
		Turn{Text: "one two"},
	)
	require.NoError(t, err)
	defer s.Close()

	t.Run("a blocking request gets a whole message", func(t *testing.T) {
		resp := post(t, s.URL, `{"model":"m","max_tokens":10,"messages":[]}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var m struct {
			Content    []block `json:"content"`
			StopReason string  `json:"stop_reason"`
			Model      string  `json:"model"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		assert.Equal(t, "tool_use", m.StopReason)
		assert.Equal(t, "m", m.Model)
		require.Len(t, m.Content, 1)
		assert.Equal(t, "add", m.Content[0].Name)
		assert.JSONEq(t, `{"a":1}`, string(m.Content[0].Input))
	})
	t.Run("a streaming request gets server-sent events", func(t *testing.T) {
		resp := post(t, s.URL, `{"model":"m","max_tokens":10,"messages":[],"stream":true}`)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		var events []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events = append(events, name)
			}
		}
		assert.Equal(t, []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta",
			"content_block_stop", "message_delta", "message_stop"}, events)
	})
	t.Run("a request past the script is an error", func(t *testing.T) {
		resp := post(t, s.URL, `{"model":"m"}`)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
	reqs := s.Requests()
	require.Len(t, reqs, 3, "every request is recorded")
	assert.JSONEq(t, `{"model":"m","max_tokens":10,"messages":[]}`, string(reqs[0]))
}

func TestTheMockRefusesWhatTheAPIWouldOfASearch(t *testing.T) {
	tools := `"tools":[{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"},{"name":"add","defer_loading":true,"input_schema":{"type":"object"}}]`
	tests := []struct {
		name string
		turn Turn
		body string
		want int
	}{
		{"a search that finds a deferred tool, and calls it", Turn{Search: &Search{Query: "add", Found: []string{"add"}}, ToolCalls: []ToolCall{{Name: "add"}}},
			`{"model":"m","max_tokens":10,"messages":[],` + tools + `}`, http.StatusOK},
		{"a reference to a tool that is not deferred", Turn{Search: &Search{Query: "sub", Found: []string{"sub"}}},
			`{"model":"m","max_tokens":10,"messages":[],` + tools + `}`, http.StatusBadRequest},
		{"a search without the search tool", Turn{Search: &Search{Query: "add", Found: []string{"add"}}},
			`{"model":"m","max_tokens":10,"messages":[],"tools":[{"name":"add","defer_loading":true}]}`, http.StatusBadRequest},
		{"a call of a deferred tool nothing found", Turn{ToolCalls: []ToolCall{{Name: "add"}}},
			`{"model":"m","max_tokens":10,"messages":[],` + tools + `}`, http.StatusBadRequest},
		{"a call of a tool found earlier in the conversation", Turn{ToolCalls: []ToolCall{{Name: "add"}}},
			`{"model":"m","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_search_tool_result","tool_use_id":"x","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"add"}]}}]}],` + tools + `}`, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(tt.turn)
			require.NoError(t, err)
			defer s.Close()
			resp := post(t, s.URL, tt.body)
			assert.Equal(t, tt.want, resp.StatusCode)
		})
	}
}
