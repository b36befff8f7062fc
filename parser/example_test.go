package parser_test

import (
	"fmt"

	"inferno/parser"
)

func Example() {
	p := parser.New(parser.Options{
		Reasoning: true,
		Tools:     true,
		IDFunc:    func(i int) string { return fmt.Sprint("call_", i) },
	})
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
	content, reasoning, calls := parser.Parse(reply, parser.Options{Reasoning: true})
	fmt.Printf("%q %q %d\n", content, reasoning, len(calls))
	// Output: "It is 4." "Easy." 0
}
