#!/usr/bin/env python3
"""Render the chat-template test conversations of package inferno/chat with
Hugging Face transformers' apply_chat_template.

Inputs, all in the repository (the machine needs no network):

  testdata/chat/families.json
      family -> its template file (in testdata/chat/templates/), the
      bos_token and eos_token the template sees, and where the template
      comes from
  testdata/chat/family_conversations.json
      {"tools": {name: [OpenAI tool definitions]}, "cases": [...]}: each
      case is a conversation in OpenAI's wire format, the families to
      render it with, add_generation_prompt, continue_final_message and
      template kwargs (chat_template_kwargs)

Output: testdata/chat/family_cases.json, every conversation rendered with
every family it names: the prompt text apply_chat_template returns, or the
error the template raised (raise_exception), which inferno must raise too.

Each template is rendered through a real tokenizer object's
apply_chat_template(..., tokenize=False), with the family's bos_token and
eos_token as its special tokens; the template text is passed as
chat_template. Messages go from the wire format to the template's form the
way inferno's server and package chat do it (and vLLM):

  - content is always a string ("" for null);
  - tool-call arguments, JSON text, are parsed into an object with its key
    order kept ("" gives {}, text that is not JSON stays a string), and a
    call is {"id" (when set), "type": "function", "function": {"name",
    "arguments"}};
  - reasoning_content, tool_call_id and name appear only when set;
  - for the harmony template of gpt-oss (one that writes <|channel|>), an
    assistant's reasoning_content is also given as "thinking", the field
    that template reads, and the content of an assistant message that has
    both reasoning and tool calls is left out (that template refuses both).
    llama.cpp adapts the messages for gpt-oss the same way.

strftime_now is pinned to 2026-01-15 (gpt-oss's and Mistral Small's
templates print the date); the Go test pins package chat's clock to the
same day.

Usage, from the repository's root, where transformers is installed:

    python3 tools/archfixtures/chat_templates.py
"""

import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHAT = os.path.join(ROOT, "testdata", "chat")
OUT = os.path.join(CHAT, "family_cases.json")

PINNED = datetime.datetime(2026, 1, 15, 9, 30, 0)


class PinnedDatetime(datetime.datetime):
    """datetime whose now() is PINNED."""

    @classmethod
    def now(cls, tz=None):
        return cls(PINNED.year, PINNED.month, PINNED.day, PINNED.hour, PINNED.minute, PINNED.second)


def pin_clock():
    """Make transformers' strftime_now global see PINNED."""
    import transformers.utils.chat_template_utils as ctu

    current = getattr(ctu, "datetime", None)
    if isinstance(current, type):  # from datetime import datetime
        ctu.datetime = PinnedDatetime
    elif current is not None:  # import datetime
        class Module:
            pass
        mod = Module()
        for k in dir(datetime):
            if not k.startswith("__"):
                setattr(mod, k, getattr(datetime, k))
        mod.datetime = PinnedDatetime
        ctu.datetime = mod
    else:
        sys.exit("transformers.utils.chat_template_utils has no datetime to pin; update pin_clock")


_tokenizers = {}


def tokenizer(bos, eos):
    """A fast tokenizer whose special tokens are bos and eos; its vocabulary
    does not matter, since the prompts are not tokenized."""
    key = (bos, eos)
    if key not in _tokenizers:
        from tokenizers import Tokenizer, models
        from transformers import PreTrainedTokenizerFast

        vocab = {"<unk>": 0}
        for t in (bos, eos):
            vocab.setdefault(t, len(vocab))
        tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
        _tokenizers[key] = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=bos, eos_token=eos, unk_token="<unk>")
    return _tokenizers[key]


def render(template, bos, eos, messages, tools, add_generation_prompt, continue_final_message, kwargs):
    """Renders messages with transformers' apply_chat_template."""
    out = tokenizer(bos, eos).apply_chat_template(
        messages,
        tools=tools,
        chat_template=template,
        add_generation_prompt=add_generation_prompt,
        continue_final_message=continue_final_message,
        tokenize=False,
        return_dict=False,
        **kwargs,
    )
    if not isinstance(out, str):
        raise SystemExit(f"apply_chat_template(tokenize=False) returned {type(out).__name__}, not str")
    return out


def check_clock():
    got = render("{{ strftime_now('%Y-%m-%d') }}", "<s>", "</s>", [{"role": "user", "content": "x"}], None, False, False, {})
    if got != PINNED.strftime("%Y-%m-%d"):
        sys.exit(f"strftime_now gives {got!r}, not the pinned {PINNED:%Y-%m-%d}; update pin_clock")


def parse_arguments(text):
    if text == "":
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def template_message(m, harmony):
    """Converts a wire-format message as package chat does."""
    out = {"role": m["role"]}
    reasoning = m.get("reasoning_content") or ""
    calls = m.get("tool_calls") or []
    if not (harmony and reasoning and calls):
        out["content"] = m.get("content") or ""
    if reasoning:
        out["reasoning_content"] = reasoning
        if harmony:
            out["thinking"] = reasoning
    if calls:
        out["tool_calls"] = []
        for c in calls:
            call = {}
            if c.get("id"):
                call["id"] = c["id"]
            call["type"] = "function"
            call["function"] = {"name": c["function"]["name"], "arguments": parse_arguments(c["function"].get("arguments") or "")}
            out["tool_calls"].append(call)
    if m.get("tool_call_id"):
        out["tool_call_id"] = m["tool_call_id"]
    if m.get("name"):
        out["name"] = m["name"]
    return out


def main():
    with open(os.path.join(CHAT, "families.json"), encoding="utf-8") as f:
        families = json.load(f)
    with open(os.path.join(CHAT, "family_conversations.json"), encoding="utf-8") as f:
        conv = json.load(f)
    import jinja2
    import transformers

    pin_clock()
    check_clock()
    cases = []
    for c in conv["cases"]:
        tools = conv["tools"][c["tools"]] if c.get("tools") else None
        for name in c["families"]:
            fam = families[name]
            with open(os.path.join(CHAT, "templates", fam["template"]), encoding="utf-8") as f:
                template = f.read()
            harmony = "<|channel|>" in template
            messages = [template_message(m, harmony) for m in c["messages"]]
            case = {
                "name": c["name"],
                "family": name,
                "messages": c["messages"],
                "tools": c.get("tools", ""),
                "add_generation_prompt": c.get("add_generation_prompt", False),
                "continue_final_message": c.get("continue_final_message", False),
                "kwargs": c.get("kwargs", {}),
            }
            try:
                case["rendered"] = render(template, fam["bos_token"], fam["eos_token"], messages, tools,
                                          case["add_generation_prompt"], case["continue_final_message"], case["kwargs"])
            except (jinja2.TemplateError, TypeError, ValueError) as e:
                case["rendered"] = None
                case["error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
    doc = {
        "generator": "tools/archfixtures/chat_templates.py",
        "transformers": transformers.__version__,
        "jinja2": jinja2.__version__,
        "date": PINNED.strftime("%Y-%m-%d"),
        "cases": cases,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum(1 for c in cases if c["rendered"] is None)
    print(f"wrote {OUT}: {len(cases)} renderings ({errors} template errors), transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
