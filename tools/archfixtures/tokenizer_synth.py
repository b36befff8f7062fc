#!/usr/bin/env python3
"""Tokenizer fixtures for the families with no npm package: Mistral's tekken
and Phi-4's (llama.cpp's "tekken" and "dbrx").

    python3 tools/archfixtures/tokenizer_synth.py testdata            # needs tokenizers
    python3 tools/archfixtures/tokenizer_synth.py --no-cases testdata # tokenizer files only

For each family, writes OUTDIR/NAME-tokenizer/ with

    tokenizer.json         a small byte-level BPE vocabulary with the
                           family's real pre-tokenizer, normalizer,
                           decoder and BPE flags (below)
    tokenizer_config.json  its special tokens
    cases.json             the ids Hugging Face tokenizers gives the texts
                           of tokenizer_texts.json (the common ones and the
                           family's), add_special_tokens=False, and the text
                           decode gives back

The vocabulary is learned here, deterministically and without tokenizers:
GPT-2's 256 byte-level symbols, 700 BPE merges learned from CORPUS, a few
whole words that no merge makes (so that ignore_merges shows), and the
family's special tokens, where its real vocabulary has them. The
definitions copy the structure of the published tokenizer.json files:

    tekken (Mistral Nemo, Small 3.x, Devstral, Ministral): no normalizer;
        Split by the tekken expression (o200k's without contractions,
        single digits), Isolated, then ByteLevel without its regex;
        ignore_merges, as llama.cpp assumes for "tekken"; control tokens
        <unk>, <s>, </s>, [INST], ... first, at the ids Mistral gives them.
    phi4 (Phi-4 14B, cl100k): no normalizer; Split by the cl100k
        expression (Llama 3's), Isolated, then ByteLevel; no ignore_merges
        (llama.cpp's "dbrx"); <|endoftext|>, <|im_start|>, <|im_end|>,
        <|im_sep|> after the vocabulary.

tokenizer.json and tokenizer_config.json come out the same on every run;
cases.json records the tokenizers version that made it.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

TEKKEN_SPLIT = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
CL100K_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

CORPUS = """
The quick brown fox jumps over the lazy dog. They said it's fine, and we'll see
whether the results hold: 2024 was a year of 366 days, and 1,000,000 is a large
number. Don't worry about the details; the tokenizer splits words, numbers and
punctuation before it merges bytes. HelloWorld, camelCase and PascalCase names
appear in code, as do snake_case_names and SCREAMING_CASE constants.
def main():
    for i in range(10):
        print(f"value {i}: {i * i}")
    return None
func main() {
	fmt.Println("hello, world")
	if err != nil {
		return err
	}
}
<div class="note">Hello</div> https://example.com/index.html?query=value
Le café est très bon, naïve résumé, straße, Ελληνικά, русский язык, עברית.
日本語のテキストと中文的文本，한국어 문장도 있습니다。你好，世界！
العربية لغة جميلة، مرحبا بالعالم. हिन्दी भाषा में नमस्ते दुनिया।
Emoji: 😀 😃 👍 ❤️ 🇫🇷 — “quotes” and ‘single quotes’… tabs\tand newlines.
The answer is 42. What is 2+2? I think the answer is 4, isn't it?
You are a helpful assistant. Please answer the question with care.
"""

WHOLE_WORDS = ["Ġinferno", "Ġtokenizers", "Zyxwv", "Ġtokenizer"]

FAMILIES = {
    "tekken": dict(
        split=TEKKEN_SPLIT, ignore_merges=True,
        specials_first=["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                        "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
                        "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
                        "[TOOL_CONTENT]"],
        specials_last=[],
        config=dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", add_bos_token=True, add_eos_token=False,
                    clean_up_tokenization_spaces=False, tokenizer_class="LlamaTokenizerFast",
                    model_max_length=131072),
    ),
    "phi4": dict(
        split=CL100K_SPLIT, ignore_merges=False,
        specials_first=[],
        specials_last=["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|im_sep|>", "<|dummy_0|>"],
        config=dict(bos_token="<|endoftext|>", eos_token="<|im_end|>", pad_token="<|dummy_0|>",
                    unk_token="<|endoftext|>", add_bos_token=False, add_prefix_space=False,
                    clean_up_tokenization_spaces=False, tokenizer_class="GPT2Tokenizer", model_max_length=16384),
    ),
}

N_MERGES = 700


def bytes_to_unicode():
    """GPT-2's map from bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE = bytes_to_unicode()


def byte_level(s):
    return "".join(BYTE[b] for b in s.encode("utf-8"))


def learn_merges(corpus, n):
    """Byte-level BPE training: the most frequent pair first, ties by the pair."""
    words = {}
    for w in re.findall(r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d| ?[^\s\w]+|\s+", corpus):
        key = tuple(byte_level(w))
        words[key] = words.get(key, 0) + 1
    merges = []
    for _ in range(n):
        counts = {}
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + c
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        merged = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + c
        words = merged
    return merges


def tokenizer_files(name):
    fam = FAMILIES[name]
    merges = learn_merges(CORPUS, N_MERGES)
    vocab, added, decoder = {}, [], {}

    def special(text):
        i = len(vocab)
        vocab[text] = i
        added.append(dict(id=i, content=text, single_word=False, lstrip=False, rstrip=False, normalized=False,
                          special=True))
        decoder[str(i)] = dict(content=text, lstrip=False, normalized=False, rstrip=False, single_word=False,
                               special=True)

    for s in fam["specials_first"]:
        special(s)
    for b in range(256):
        vocab[BYTE[b]] = len(vocab)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    for w in WHOLE_WORDS:
        vocab.setdefault(w, len(vocab))
    for s in fam["specials_last"]:
        special(s)
    tj = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": fam["split"]}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": fam["ignore_merges"], "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }
    tc = dict(added_tokens_decoder=decoder, **fam["config"])
    return tj, tc


def cases(name, tj):
    import tokenizers

    tok = tokenizers.Tokenizer.from_str(json.dumps(tj))
    with open(os.path.join(HERE, "tokenizer_texts.json"), encoding="utf-8") as f:
        texts = json.load(f)
    out = []
    for text in texts["common"] + texts["special"][name]:
        ids = tok.encode(text, add_special_tokens=False).ids
        out.append(dict(text=text, ids=ids, decoded=tok.decode(ids, skip_special_tokens=False)))
    return dict(tokenizer=f"Hugging Face tokenizers {tokenizers.__version__} on {name}-tokenizer/tokenizer.json",
                cases=out)


def write_json(path, obj, indent):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=indent)
        f.write("\n")


def main(argv):
    with_cases = "--no-cases" not in argv
    args = [a for a in argv if a != "--no-cases"]
    if len(args) != 1:
        sys.exit(__doc__)
    for name in FAMILIES:
        d = os.path.join(args[0], name + "-tokenizer")
        os.makedirs(d, exist_ok=True)
        tj, tc = tokenizer_files(name)
        write_json(os.path.join(d, "tokenizer.json"), tj, None)
        write_json(os.path.join(d, "tokenizer_config.json"), tc, 1)
        if with_cases:
            write_json(os.path.join(d, "cases.json"), cases(name, tj), 1)
        print("wrote", d)


if __name__ == "__main__":
    main(sys.argv[1:])
