package mcp

import "context"

// CompleteParams are the parameters of completion/complete.
type CompleteParams struct {
	Ref      Reference        `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	Context  *CompleteContext `json:"context,omitempty"`
}

// Reference names what is completed: a prompt (Type "ref/prompt", Name) or
// a resource template (Type "ref/resource", URI).
type Reference struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	URI   string `json:"uri,omitempty"`
}

// PromptRef refers to a prompt by name.
func PromptRef(name string) Reference { return Reference{Type: "ref/prompt", Name: name} }

// ResourceTemplateRef refers to a resource template by its URI template.
func ResourceTemplateRef(uriTemplate string) Reference {
	return Reference{Type: "ref/resource", URI: uriTemplate}
}

// CompleteArgument is the argument being completed and its value so far.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries the values of arguments already filled in.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult is the server's suggestions.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// Completion is a list of suggested values.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// Complete asks for completions of a prompt or resource template argument
// (completion/complete).
func (c *Connection) Complete(ctx context.Context, params *CompleteParams) (*CompleteResult, error) {
	var res CompleteResult
	if err := c.callObject(ctx, "completion/complete", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
