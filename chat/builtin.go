package chat

// Templates for model files that carry no chat template, in the formats
// that llama.cpp builds in (src/llama-chat.cpp, which llama.cpp uses when
// a file has no template or the user names one). Each renders exactly what
// llama.cpp's function renders, preceded by bos_token: llama.cpp adds the
// BOS when it tokenizes the prompt, where inferno renders it with the
// template. Like llama.cpp's, they render no tools, and any role other
// than system and user is written as an assistant's message. Their
// generation prompt is empty: the model answers right after [/INST].
const (
	// MistralV7 is llama.cpp's mistral-v7, the format of Mistral Large
	// 2411: "[SYSTEM_PROMPT] S[/SYSTEM_PROMPT][INST] U[/INST] A</s>".
	MistralV7 = "{{- bos_token -}}" +
		"{%- for message in messages -%}" +
		"{%- if message['role'] == 'system' -%}" +
		"{{- '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' -}}" +
		"{%- elif message['role'] == 'user' -%}" +
		"{{- '[INST] ' + message['content'] + '[/INST]' -}}" +
		"{%- else -%}" +
		"{{- ' ' + message['content'] + '</s>' -}}" +
		"{%- endif -%}" +
		"{%- endfor -%}"

	// MistralV7Tekken is llama.cpp's mistral-v7-tekken, the format of
	// Mistral Small 3.x and Devstral, whose tekken tokenizer wants no space
	// after the tags: "[SYSTEM_PROMPT]S[/SYSTEM_PROMPT][INST]U[/INST]A</s>".
	MistralV7Tekken = "{{- bos_token -}}" +
		"{%- for message in messages -%}" +
		"{%- if message['role'] == 'system' -%}" +
		"{{- '[SYSTEM_PROMPT]' + message['content'] + '[/SYSTEM_PROMPT]' -}}" +
		"{%- elif message['role'] == 'user' -%}" +
		"{{- '[INST]' + message['content'] + '[/INST]' -}}" +
		"{%- else -%}" +
		"{{- message['content'] + '</s>' -}}" +
		"{%- endif -%}" +
		"{%- endfor -%}"
)
