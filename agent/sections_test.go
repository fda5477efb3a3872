package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcplug/mcplug/agent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sectionFunc is a PromptSection from a function.
type sectionFunc func(ctx context.Context) (agent.Section, error)

func (f sectionFunc) PromptSection(ctx context.Context) (agent.Section, error) { return f(ctx) }

func fixed(title, text string) agent.PromptSection {
	return sectionFunc(func(context.Context) (agent.Section, error) { return agent.Section{Title: title, Text: text}, nil })
}

func TestSectionsReachTheModelApartFromTheProgramsPrompt(t *testing.T) {
	turn := 0
	changing := sectionFunc(func(context.Context) (agent.Section, error) {
		turn++
		if turn == 1 {
			return agent.Section{Title: "later", Text: "  \n"}, nil
		}
		return agent.Section{Title: "later", Text: "now there is something"}, nil
	})
	s := &script{replies: []*agent.Response{call("echo", `{"text":"hi"}`), answer("done")}}
	a := &agent.Agent{Model: s, System: "Be brief.", Tools: []agent.ToolProvider{echoFuncs()},
		Sections: []agent.PromptSection{fixed("first", "one"), changing, fixed("empty", "")}}
	_, err := a.Chat(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, s.requests, 2)
	for _, r := range s.requests {
		assert.Equal(t, "Be brief.", r.System, "the program's prompt is never joined with a section")
	}
	assert.Equal(t, []agent.Section{{Title: "first", Text: "one"}}, s.requests[0].Sections,
		"a section with no text adds nothing")
	assert.Equal(t, []agent.Section{{Title: "first", Text: "one"}, {Title: "later", Text: "now there is something"}}, s.requests[1].Sections,
		"sections are asked again before every turn, in order")
}

func TestASectionThatFailsEndsTheChat(t *testing.T) {
	boom := errors.New("boom")
	s := &script{replies: []*agent.Response{answer("never")}}
	a := &agent.Agent{Model: s, Sections: []agent.PromptSection{
		sectionFunc(func(context.Context) (agent.Section, error) { return agent.Section{}, boom })}}
	_, err := a.Chat(context.Background(), "go")
	require.ErrorIs(t, err, boom)
	assert.Empty(t, s.requests, "the model is not asked without its system prompt")
}
