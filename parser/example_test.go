package parser_test

import (
	"fmt"

	"inferno/parser"
)

func Example() {
	p, err := parser.New(parser.Options{
		Format:    parser.Qwen,
		Reasoning: true,
		Tools:     true,
		IDFunc:    func(i int) string { return fmt.Sprint("call_", i) },
	})
	if err != nil {
		panic(err)
	}
	// The decoded text of each token, as the model generates them.
	pieces := []string{
		"<think>", "\n", "The user", " asks for", " the weather", ".\n", "</think>", "\n\n",
		"Let me", " check", ".\n", "<tool_call>", "\n", `{"name": "get_weather", `,
		`"arguments": {"location": "Paris"}}`, "\n", "</tool_call>",
	}
	show := func(d parser.Delta) {
		switch {
		case d.Reasoning != "":
			fmt.Printf("reasoning %q\n", d.Reasoning)
		case d.Content != "":
			fmt.Printf("content %q\n", d.Content)
		}
		for _, c := range d.ToolCalls {
			fmt.Printf("tool call %d %s %s %s\n", c.Index, c.ID, c.Name, c.Arguments)
		}
	}
	for _, s := range pieces {
		show(p.Add(s))
	}
	show(p.Finish())
	fmt.Println("finish_reason tool_calls:", len(p.ToolCalls()) > 0)
	// Output:
	// reasoning "The user"
	// reasoning " asks for"
	// reasoning " the weather"
	// reasoning "."
	// content "Let me"
	// content " check"
	// content "."
	// tool call 0 call_0 get_weather {"location":"Paris"}
	// finish_reason tool_calls: true
}

func ExampleParse() {
	reply := "<think>\nEasy.\n</think>\n\nIt is 4."
	content, reasoning, calls, err := parser.Parse(reply, parser.Options{Format: parser.Qwen, Reasoning: true})
	fmt.Printf("%q %q %d %v\n", content, reasoning, len(calls), err)
	// Output: "It is 4." "Easy." 0 <nil>
}

// A reply of gpt-oss in OpenAI's harmony format: the analysis channel is
// reasoning, and a message to functions.NAME is a tool call, complete when
// the reply ends (its <|call|> is an end-of-generation token).
func ExampleParse_harmony() {
	reply := "<|channel|>analysis<|message|>Need the weather.<|end|>" +
		"<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json" +
		`<|message|>{"city": "Paris"}`
	opts := parser.Options{Format: parser.Harmony, Tools: true, IDFunc: func(int) string { return "call_1" }}
	content, reasoning, calls, _ := parser.Parse(reply, opts)
	fmt.Printf("%q %q %+v\n", content, reasoning, calls)
	// Output: "" "Need the weather." [{Index:0 ID:call_1 Name:get_weather Arguments:{"city":"Paris"}}]
}

// Mistral Small 3.2 and Devstral call tools with [TOOL_CALLS]NAME[ARGS]{...};
// the IDs are 9 letters and digits, as Mistral's templates require.
func ExampleParse_mistral() {
	reply := `Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{}`
	content, _, calls, _ := parser.Parse(reply, parser.Options{Format: parser.Mistral, Tools: true})
	fmt.Println(content)
	for _, c := range calls {
		fmt.Println(c.Name, c.Arguments, len(c.ID))
	}
	// Output:
	// Checking.
	// get_weather {"city":"Paris"} 9
	// get_time {} 9
}
