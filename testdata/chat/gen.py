#!/usr/bin/env python3
"""Generate testdata/chat/cases.json: chat-template renderings from Jinja2.

Conversations are rendered with the Qwen3 template, the ChatML fallback of
package inferno/chat, and the two test templates in templates/.

Each case is rendered the way Hugging Face transformers' apply_chat_template
does it (transformers/utils/chat_template_utils.py): an
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the
loopcontrols extension, a tojson filter built on json.dumps with
ensure_ascii=False and Python's default separators, and the globals
raise_exception and strftime_now. The template variables are messages,
tools, documents, add_generation_prompt, the special tokens and any
chat_template_kwargs.

Messages are written in the OpenAI wire format, as a client sends them, and
converted to template messages the way vLLM does before rendering (and the
way package inferno/chat does): content is always a string, tool-call
arguments (a JSON text) are parsed into an object with their key order kept
(an empty string gives {}, invalid JSON is passed on as the string), and
optional fields are present only when they are set.

continue_final_message follows transformers: render with
add_generation_prompt false, then cut the text right after the last
occurrence of the final message's content.

It also writes testdata/chat/engine_cases.json: small templates that
exercise the engine and the filters and globals that package chat adds
(tojson's options, Python's float repr, macros and whitespace control,
range, raise_exception), with their output or the error they raise.

Usage (with jinja2 3.1.x installed):

    python3 testdata/chat/gen.py
"""

import json
import os
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHATML = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def load_qwen3():
    path = os.path.join(ROOT, "testdata", "qwen3-tokenizer", "tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    return cfg["chat_template"], cfg.get("bos_token"), cfg.get("eos_token")


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def parse_arguments(text):
    if text == "":
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def template_message(m):
    """Convert an OpenAI wire message to the dict the template sees."""
    d = {"role": m["role"], "content": m.get("content") or ""}
    if m.get("reasoning_content"):
        d["reasoning_content"] = m["reasoning_content"]
    if m.get("tool_calls"):
        calls = []
        for tc in m["tool_calls"]:
            c = {}
            if tc.get("id"):
                c["id"] = tc["id"]
            c["type"] = "function"
            c["function"] = {
                "name": tc["function"]["name"],
                "arguments": parse_arguments(tc["function"].get("arguments", "")),
            }
            calls.append(c)
        d["tool_calls"] = calls
    if m.get("tool_call_id"):
        d["tool_call_id"] = m["tool_call_id"]
    if m.get("name"):
        d["name"] = m["name"]
    return d


def render(env, source, bos, eos, case):
    agp = case.get("add_generation_prompt", False)
    cont = case.get("continue_final_message", False)
    msgs = [template_message(m) for m in case["messages"]]
    tools = case.get("tools") or None
    kwargs = dict(case.get("kwargs", {}))
    tmpl = env.from_string(source)
    out = tmpl.render(messages=msgs, tools=tools, documents=None,
                      add_generation_prompt=agp, bos_token=bos,
                      eos_token=eos, **kwargs)
    if cont:
        final = msgs[-1]["content"]
        if final.strip() not in out:
            raise ValueError("final message not found in rendered text")
        loc = out.rindex(final.strip())
        if out[loc:loc + len(final.lstrip())] == final:
            out = out[:loc + len(final.lstrip())]
        else:
            out = out[:loc + len(final.rstrip())]
    return out


def tool(name, description, params):
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": params}}


def call(cid, name, arguments):
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": arguments}}


WEATHER = tool("get_weather", "Get the current weather for a city.", {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["location"],
})

# Keys deliberately out of alphabetical order at every level, nested
# JSON-schema objects and arrays, floats that Go's %g would print
# differently from Python's repr, and characters that Go's encoding/json
# escapes but Python's json.dumps(ensure_ascii=False) does not.
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_flights",
        "parameters": {
            "type": "object",
            "required": ["to", "from"],
            "properties": {
                "to": {"type": "string", "description": "Destination IATA code"},
                "from": {"type": "string", "description": "Origin <IATA> code & city"},
                "when": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "string", "format": "date"},
                        "end": {"type": "string", "format": "date"},
                    },
                },
                "passengers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "age": {"type": "integer", "minimum": 0, "maximum": 130},
                        },
                    },
                },
                "max_price": {"type": "number", "minimum": 0.0, "maximum": 1000000.0,
                              "default": 250.5, "multipleOf": 0.01},
                "flexible": {"type": "boolean", "default": False},
                "cabin": {"type": ["string", "null"], "default": None},
            },
        },
        "description": "Search flights. Prices in €; line\u2028separator, tab\there, \"quotes\" and \\ backslash.",
        "strict": True,
    },
}

CALC = tool("calculator", "Evaluate an arithmetic expression.", {
    "type": "object",
    "properties": {"expression": {"type": "string"}},
    "required": ["expression"],
})

TRANSLATE = tool("translate", "Übersetze Text — 翻訳する 🌍", {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "target_lang": {"type": "string", "enum": ["de", "ja", "zh-CN"]},
    },
    "required": ["text", "target_lang"],
})

CASES = [
    {
        "name": "system_tools",
        "messages": [
            {"role": "system", "content": "You are a travel agent."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "tools": [WEATHER, CALC],
        "add_generation_prompt": True,
    },
    {
        "name": "tools_no_system",
        "messages": [{"role": "user", "content": "What is 17*23?"}],
        "tools": [CALC],
        "add_generation_prompt": True,
    },
    {
        "name": "key_order_nested_schema",
        "messages": [
            {"role": "system", "content": "Book travel."},
            {"role": "user", "content": "Find me a flight from BER to LIS."},
        ],
        "tools": [SEARCH],
        "add_generation_prompt": True,
    },
    {
        "name": "tool_call_roundtrip",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [
                call("call_1", "get_weather", '{"location": "Paris, France", "unit": "celsius"}')]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 18, "sky": "cloudy"}'},
        ],
        "tools": [WEATHER],
        "add_generation_prompt": True,
    },
    {
        "name": "tool_calls_with_content_and_grouped_responses",
        "messages": [
            {"role": "system", "content": "Be precise."},
            {"role": "user", "content": "Compare the weather in Oslo and Rome, then add 2+2."},
            {"role": "assistant", "content": "Let me look these up.", "tool_calls": [
                call("a", "get_weather", '{"unit":"celsius","location":"Oslo"}'),
                call("b", "get_weather", '{"location":"Rome","unit":"celsius"}'),
                call("c", "calculator", '{"expression":"2+2"}'),
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "Oslo: 3°C, snow"},
            {"role": "tool", "tool_call_id": "b", "content": "Rome: 21°C, sunny"},
            {"role": "tool", "tool_call_id": "c", "content": "4"},
        ],
        "tools": [WEATHER, CALC],
        "add_generation_prompt": True,
    },
    {
        "name": "multi_step_tools_then_answer_then_followup",
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": "", "reasoning_content": "I should call the tool.",
             "tool_calls": [call("1", "get_weather", '{"location": "Oslo"}')]},
            {"role": "tool", "tool_call_id": "1", "content": "3°C"},
            {"role": "assistant", "content": "It is 3°C in Oslo.",
             "reasoning_content": "The tool said 3°C."},
            {"role": "user", "content": "And in Fahrenheit?"},
            {"role": "assistant", "content": "",
             "tool_calls": [call("2", "calculator", '{"expression": "3*9/5+32"}')]},
            {"role": "tool", "tool_call_id": "2", "content": "37.4"},
        ],
        "tools": [WEATHER, CALC],
        "add_generation_prompt": True,
    },
    {
        "name": "reasoning_content_in_history",
        "messages": [
            {"role": "user", "content": "Is 91 prime?"},
            {"role": "assistant", "content": "No, 91 = 7 × 13.",
             "reasoning_content": "91/7 = 13, so it is composite."},
            {"role": "user", "content": "And 97?"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "reasoning_content_final_turn",
        "messages": [
            {"role": "user", "content": "Is 97 prime?"},
            {"role": "assistant", "content": "\nYes, 97 is prime.",
             "reasoning_content": "\nCheck 2, 3, 5, 7: none divide 97.\n"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "think_tags_in_earlier_and_final_turns",
        "messages": [
            {"role": "system", "content": "Think step by step."},
            {"role": "user", "content": "2+3?"},
            {"role": "assistant", "content": "<think>\nadd them\n</think>\n\n5"},
            {"role": "user", "content": "times 4?"},
            {"role": "assistant", "content": "<think>\n5*4\n</think>\n\n20"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "close_think_without_open",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hmm, greeting</think>Hello!"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "enable_thinking_false_multiturn",
        "messages": [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "Capital of Italy?"},
            {"role": "assistant", "content": "Rome"},
            {"role": "user", "content": "Of Spain?"},
        ],
        "add_generation_prompt": True,
        "kwargs": {"enable_thinking": False},
    },
    {
        "name": "enable_thinking_true",
        "messages": [{"role": "user", "content": "Prove there are infinitely many primes."}],
        "add_generation_prompt": True,
        "kwargs": {"enable_thinking": True},
    },
    {
        "name": "enable_thinking_false_with_tools",
        "messages": [
            {"role": "system", "content": "You translate."},
            {"role": "user", "content": "Translate 'good morning' to Japanese."},
        ],
        "tools": [TRANSLATE],
        "add_generation_prompt": True,
        "kwargs": {"enable_thinking": False},
    },
    {
        "name": "continue_final_message",
        "messages": [
            {"role": "user", "content": "Write a haiku about rain."},
            {"role": "assistant", "content": "Soft rain on the roof"},
        ],
        "continue_final_message": True,
    },
    {
        "name": "continue_final_message_trailing_space",
        "messages": [
            {"role": "system", "content": "Complete the sentence."},
            {"role": "user", "content": "The quick brown fox"},
            {"role": "assistant", "content": "  jumps over the "},
        ],
        "continue_final_message": True,
    },
    {
        "name": "unicode_text",
        "messages": [
            {"role": "system", "content": "Réponds en français. 你好！ Привет. مرحبا"},
            {"role": "user", "content": "Emoji test: 👩‍💻🚀✨ and combining e\u0301 and \u00a0nbsp\ttab"},
            {"role": "assistant", "content": "D'accord 😊 — « très bien »"},
            {"role": "user", "content": "日本語で説明してください。"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "user_tool_response_text_is_not_a_query",
        "messages": [
            {"role": "user", "content": "Use the calculator for 6*7."},
            {"role": "assistant", "content": "",
             "tool_calls": [call("x", "calculator", '{"expression": "6*7"}')]},
            {"role": "user", "content": "<tool_response>\n42\n</tool_response>"},
            {"role": "assistant", "content": "<think>\nThe tool returned 42.\n</think>\n\n6*7 = 42."},
        ],
        "tools": [CALC],
        "add_generation_prompt": False,
    },
    {
        "name": "arguments_invalid_empty_and_nested",
        "messages": [
            {"role": "user", "content": "Do three things."},
            {"role": "assistant", "content": "On it.", "tool_calls": [
                call("p", "calculator", "not json {"),
                call("q", "get_weather", ""),
                call("r", "search_flights",
                     '{"to": "LIS", "from": "BER", "passengers": [{"name": "Zoë", "age": 31},'
                     ' {"name": "Ann", "age": 2}], "max_price": 300.0, "when": {"start": "2025-05-01"},'
                     ' "flexible": true, "cabin": null, "note": "a<b & c>d"}'),
            ]},
            {"role": "tool", "tool_call_id": "p", "content": "error: bad expression"},
            {"role": "tool", "tool_call_id": "q", "content": "error: location required"},
            {"role": "tool", "tool_call_id": "r", "content": "[]"},
            {"role": "assistant", "content": "No flights found."},
            {"role": "user", "content": "Thanks."},
        ],
        "tools": [CALC, WEATHER, SEARCH],
        "add_generation_prompt": True,
    },
    {
        "name": "names_and_ids",
        "messages": [
            {"role": "system", "content": "Multi-user chat.", "name": "moderator"},
            {"role": "user", "content": "Hi, I'm Ana.", "name": "ana"},
            {"role": "assistant", "content": "Hello Ana!", "name": "bot"},
            {"role": "user", "content": "Hi, I'm Bo.", "name": "bo"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "second_system_message_and_final_assistant",
        "messages": [
            {"role": "system", "content": "First system."},
            {"role": "user", "content": "Q1"},
            {"role": "system", "content": "Second system, mid-conversation."},
            {"role": "user", "content": "Q2"},
            {"role": "assistant", "content": "A2"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "tool_message_first_and_last",
        "messages": [
            {"role": "tool", "tool_call_id": "t0", "content": "orphan result"},
            {"role": "user", "content": "What was that?"},
            {"role": "assistant", "content": "A tool result.",
             "tool_calls": [call("t1", "calculator", '{"expression": "1+1"}')]},
            {"role": "tool", "tool_call_id": "t1", "content": "2"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "whitespace_and_special_text",
        "messages": [
            {"role": "user", "content": "  leading and trailing spaces  \n\n"},
            {"role": "assistant", "content": "\n\nnewlines first"},
            {"role": "user", "content": "Literal tags: <|im_start|>user <tool_call> {{ not jinja }} {% raw %}"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "chatml_fallback",
        "template": "chatml",
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Bye"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "chatml_fallback_tool_no_prompt",
        "template": "chatml",
        "messages": [
            {"role": "user", "content": "ping"},
            {"role": "assistant", "content": "",
             "tool_calls": [call("z", "calculator", '{"expression": "1"}')]},
            {"role": "tool", "tool_call_id": "z", "content": "pong"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "chatml_fallback_continue",
        "template": "chatml",
        "messages": [
            {"role": "user", "content": "Count to three."},
            {"role": "assistant", "content": "One, two,"},
        ],
        "continue_final_message": True,
    },
]


def style_cases():
    """Conversations rendered with the templates in templates/: one in the
    style of Llama 3.1 (tools | tojson(indent=4), trim, 'x' in message,
    reassigned messages) and one in the style of Qwen3-Coder (macros,
    |items, is mapping/sequence, loop.previtem/nextitem)."""
    by_name = {c["name"]: c for c in CASES}
    cases = []
    for tmpl, bos, eos, names in [
        ("llama31-style", "<|begin_of_text|>", "<|eot_id|>",
         ["system_tools", "tool_call_roundtrip", "key_order_nested_schema", "unicode_text"]),
        ("coder-style", "", "<|im_end|>",
         ["system_tools", "tool_calls_with_content_and_grouped_responses", "key_order_nested_schema",
          "arguments_invalid_empty_and_nested", "names_and_ids"]),
    ]:
        for n in names:
            c = dict(by_name[n])
            if tmpl == "coder-style" and n == "arguments_invalid_empty_and_nested":
                # |items on the unparsed string raises; keep the parsed calls.
                c["messages"] = [dict(m) for m in c["messages"]]
                c["messages"][1]["tool_calls"] = c["messages"][1]["tool_calls"][1:]
            c["name"] = tmpl + "/" + n
            c["template"] = tmpl
            c["bos_token"], c["eos_token"] = bos, eos
            cases.append(c)
    return cases


# Engine cases: a template, its variables (passed as chat_template_kwargs)
# and one user message that most of them ignore.
FLOATS = [0.0, -0.0, 1.0, -2.5, 0.1, 1e15, 1e16, 123456789.0, 1234567.0, 1.5e-05,
          0.0001, 1e-05, 3.14159, 1e100, 2.5e-300, 1.7976931348623157e308, 5e-324,
          100.0, 12345678901234567890.0]
NESTED = {"zeta": 1, "alpha": [1, 2.0, {"y": None, "x": True}], "mid": {}, "empty": [],
          "text": "tab\t nl\n quote\" back\\ ctrl\x01 del\x7f é 🌍 \u2028 <&>"}

ENGINE_CASES = [
    ("tojson_default", "{{ v | tojson }}", {"v": NESTED}),
    ("tojson_indent", "{{ v | tojson(indent=2) }}", {"v": NESTED}),
    ("tojson_indent_zero_and_string", "{{ v | tojson(indent=0) }}|{{ v | tojson(indent='\t') }}",
     {"v": {"b": [1], "a": {"c": None}}}),
    ("tojson_separators", "{{ v | tojson(separators=(',', ':')) }}", {"v": NESTED}),
    ("tojson_sort_keys", "{{ v | tojson(sort_keys=true) }}", {"v": NESTED}),
    ("tojson_ensure_ascii", "{{ v | tojson(ensure_ascii=true) }}", {"v": NESTED}),
    ("tojson_positional", "{{ v | tojson(false, 1) }}", {"v": {"b": 1, "a": [2]}}),
    ("tojson_floats", "{{ v | tojson }}", {"v": FLOATS}),
    ("tojson_scalars", "{{ 1 | tojson }} {{ 'x' | tojson }} {{ none | tojson }} {{ true | tojson }} {{ [] | tojson }}", {}),
    ("tojson_in_set_and_loop",
     "{%- set j = v|tojson -%}\n[{{ j }}]\n{% for t in tools_ %}\n  {{ t |tojson }}\n{% endfor %}",
     {"v": {"q": 1, "p": 2}, "tools_": [{"name": "f", "b": 1, "a": 2}, {"z": [], "y": {}}]}),
    ("tojson_name_in_strings_and_attributes",
     "{{ '| tojson' }} {{ \"x|tojson\" }} {{ d.tojson }} {{ d['tojson'] }}",
     {"d": {"tojson": "attr"}}),
    ("string_filter",
     "{{ f | string }}|{{ n | string }}|{{ none | string }}|{{ true | string }}|{{ nothing | string }}|"
     "{{ v | string }}|{{ 'x' is string }}|{{ (1.0 | string) ~ 'x' }}",
     {"f": [0.0, 1.0, 1e16, 1234567.0, 2.5], "n": 3,
      "v": {"q": "it's", "d": 'say "hi"', "b": "both ' and \"", "c": "tab\t\x01\x7f\u00a0é🌍\u200b\\",
            "l": [None, True, 1.5, {}], "e": []}}),
    ("raw_block", "{% raw %}{{ v | tojson }}{% endraw %}", {"v": 1}),
    ("undefined_tojson_raises", "{{ nothing | tojson }}", {}),
    ("macro_whitespace",
     "{% macro m(a, b='x') %}\n  <{{ a }}{{ b }}>\n{% endmacro %}\n"
     "{%- macro n(a) -%}\n  [{{ a }}]\n{%- endmacro -%}\n"
     "  {{ m(1) }}|{{ m(2, b='y') }}|{{ n(3) }}\n"
     "{% for i in range(2) %}\n    {{ m(i) }}{{ n(i) }}\n{% endfor %}", {}),
    ("macro_recursive_schema",
     "{%- macro render(s, ind) -%}\n"
     "{%- if s.type == 'object' -%}\n"
     "{{ ind }}object {\n"
     "{%- for k, v in s.properties.items() %}\n"
     "{{ ind }}  {{ k }}: {{ render(v, ind ~ '  ') | trim }}\n"
     "{%- endfor %}\n"
     "{{ ind }}}\n"
     "{%- elif s.type == 'array' -%}\n"
     "array of {{ render(s['items'], ind) }}\n"
     "{%- else -%}\n"
     "{{ s.type }}\n"
     "{%- endif -%}\n"
     "{%- endmacro -%}\n"
     "{{ render(v, '') }}",
     {"v": {"type": "object", "properties": {"z": {"type": "string"},
            "a": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}}}}),
    ("macro_caller", "{% macro box(t) %}[{{ t }}:{{ caller() }}]{% endmacro %}{% call box('x') %}inside{% endcall %}", {}),
    ("macro_runaway_recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", {}),
    ("range_forms", "{{ range(3) | list }} {{ range(1, 10, 3) | list }} {{ range(5, 0, -2) | list }} {{ range(0) | list }}", {}),
    ("range_too_big", "{% for i in range(100001) %}{% endfor %}", {}),
    ("raise_exception", "{% if n > 1 %}{{ raise_exception('n is ' ~ n) }}{% endif %}ok", {"n": 2}),
    ("raise_exception_not_reached", "{% if n > 1 %}{{ raise_exception('n is ' ~ n) }}{% endif %}ok", {"n": 1}),
    ("loop_controls", "{% for x in v %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}",
     {"v": [1, 2, 3, 4, 5]}),
    ("trim_and_lstrip_blocks", "<ul>\n  {% for x in v %}\n    <li>{{ x }}</li>\n  {% endfor %}\n</ul>\n{# note #}\nend", {"v": ["a", "b"]}),
    ("namespace_and_string_methods",
     "{%- set ns = namespace(n=0, found=false) -%}\n"
     "{%- for m in v[::-1] -%}\n"
     "{%- if m.startswith('<') and m.endswith('>') -%}{%- set ns.n = ns.n + 1 -%}{%- endif -%}\n"
     "{%- endfor -%}\n"
     "{{ ns.n }} {{ '  a b  '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'a,b'.split(',')[-1] }}|{{ 'Hi' is string }}|{{ q is defined }}",
     {"v": ["<a>", "b", "<c>"]}),
]


def render_engine_case(env, name, source, variables):
    msgs = [{"role": "user", "content": "hi"}]
    try:
        out = env.from_string(source).render(
            messages=msgs, tools=None, documents=None, add_generation_prompt=False,
            bos_token=None, eos_token=None, **variables)
        return {"name": name, "source": source, "kwargs": variables, "rendered": out}
    except Exception as e:  # the Go side only checks that it fails
        return {"name": name, "source": source, "kwargs": variables,
                "error": type(e).__name__ + ": " + str(e)}


def write_json(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    env = make_env()
    qwen3, bos, eos = load_qwen3()
    out = []
    for case in CASES + style_cases():
        which = case.get("template", "qwen3")
        if which == "qwen3":
            source, b, e = qwen3, bos, eos
        elif which == "chatml":
            source, b, e = CHATML, None, None
        else:
            with open(os.path.join(HERE, "templates", which + ".jinja"), encoding="utf-8") as f:
                source = f.read()
            b, e = case["bos_token"], case["eos_token"]
        c = dict(case)
        c["template"] = which
        c["rendered"] = render(env, source, b, e, case)
        out.append(c)
    write_json(os.path.join(HERE, "cases.json"), out)
    write_json(os.path.join(HERE, "engine_cases.json"),
               [render_engine_case(env, *c) for c in ENGINE_CASES])


if __name__ == "__main__":
    main()
