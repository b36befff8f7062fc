"""Tiny tokenizers for families.py's checkpoints (pure Python, deterministic).

Each family's checkpoint gets a tokenizer of a few hundred tokens that has
the real family's shape, so that converters take the path they take for
the real model:

  gpt-oss    byte-level BPE, o200k's split (llama.cpp's "gpt-4o"), the
             harmony specials after the vocabulary
  mistral    byte-level BPE, tekken's split ("tekken"), Mistral's control
             tokens first (<unk> 0, <s> 1, </s> 2, [INST] ...), as Nemo
  phi4       byte-level BPE, cl100k's split (Llama 3's; llama.cpp names
             Phi-4's "dbrx" by its hash), ChatML specials after
  phi4-mini  byte-level BPE, o200k's split ("gpt-4o"), Phi-4-mini's specials
  gemma3     SentencePiece BPE with byte fallback: tokenizer.model (the
             protobuf, written here without the protobuf package) and the
             equivalent tokenizer.json (Replace " " -> "▁", BPE with
             byte_fallback), <pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4,
             <start_of_turn> 5, <end_of_turn> 6, the 256 byte pieces
             <0x00>..<0xFF>, then characters and merges

The byte-level vocabularies are make.py's (the 256 byte characters and its
24 merges). files(kind) returns {file name: bytes}; n_tokens(kind) the
tokenizer's token count (the model's vocabulary must be at least that).
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make  # noqa: E402  (the byte map and the merges)

# The split expressions of the tokenizer.json files of the real models.
O200K_SPLIT = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
               r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
               r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN_SPLIT = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
                r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
                r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CL100K_SPLIT = make.LLAMA3_SPLIT

# Byte-level kinds: split, the pre-tokenizer name llama.cpp writes for the
# real tokenizer (what families.py tells its converter, whose hash table
# does not know these tiny vocabularies), specials before and after the
# byte vocabulary, and tokenizer_config.json's entries.
BPE_KINDS = {
    "gpt-oss": dict(split=O200K_SPLIT, pre="gpt-4o", first=[], bos_template=None,
                    last=["<|startoftext|>", "<|endoftext|>", "<|return|>", "<|constrain|>", "<|channel|>",
                          "<|start|>", "<|end|>", "<|message|>", "<|call|>"],
                    config=dict(bos_token="<|startoftext|>", eos_token="<|return|>", pad_token="<|endoftext|>",
                                model_max_length=131072, tokenizer_class="PreTrainedTokenizerFast")),
    "mistral": dict(split=TEKKEN_SPLIT, pre="tekken", ignore_merges=True, bos_template="<s>",
                    first=["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                           "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"],
                    last=[],
                    config=dict(add_bos_token=True, add_eos_token=False, bos_token="<s>", eos_token="</s>",
                                unk_token="<unk>", model_max_length=1024000,
                                tokenizer_class="PreTrainedTokenizerFast")),
    "phi4": dict(split=CL100K_SPLIT, pre="dbrx", first=[], bos_template=None,
                 last=["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|im_start|>",
                       "<|im_end|>", "<|im_sep|>"],
                 config=dict(bos_token="<|endoftext|>", eos_token="<|im_end|>", pad_token="<|endoftext|>",
                             unk_token="<|endoftext|>", model_max_length=16384, tokenizer_class="GPT2Tokenizer")),
    "phi4-mini": dict(split=O200K_SPLIT, pre="gpt-4o", first=[], bos_template=None,
                      last=["<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|tool|>",
                            "<|/tool|>", "<|tool_call|>", "<|/tool_call|>"],
                      config=dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                  unk_token="<|endoftext|>", model_max_length=131072, tokenizer_class="GPT2Tokenizer")),
}

# SentencePiece piece types (sentencepiece_model.proto).
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

GEMMA_SPECIALS = [("<pad>", CONTROL), ("<eos>", CONTROL), ("<bos>", CONTROL), ("<unk>", UNKNOWN),
                  ("<mask>", CONTROL), ("<start_of_turn>", USER_DEFINED), ("<end_of_turn>", USER_DEFINED)]
GEMMA_CHARS = "▁abcdefghijklmnopqrstuvwxyz0123456789.,'"
# make.py's merges with "Ġ" as "▁", but "ĠĠ": a piece of two spaces would
# join words, which SentencePiece's whitespace split and a tokenizer.json
# without a pre-tokenizer treat differently.
GEMMA_MERGES = [(a.replace("Ġ", "▁"), b.replace("Ġ", "▁")) for a, b in make.MERGES if (a, b) != ("Ġ", "Ġ")]

# Texts whose encodings families.py records (tokenizers, and SentencePiece
# for gemma3), checked against each other on the device.
SAMPLE_TEXTS = ["the cat and the hat", "Hello, World! 12 and 1234", "  two  spaces\nand a line",
                "héllo wörld 中文", "<start_of_turn>user\nhi<end_of_turn>", "<|im_start|>x<|im_end|> [INST] y"]


def _added(i, content):
    return dict(id=i, content=content, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)


def _decoder_entry(content):
    return dict(content=content, lstrip=False, normalized=False, rstrip=False, single_word=False, special=True)


def bpe_files(kind):
    """Returns (tokenizer.json, tokenizer_config.json) of a byte-level kind."""
    k = BPE_KINDS[kind]
    vocab = {}
    for s in k["first"]:
        vocab[s] = len(vocab)
    base = len(vocab)
    for b, ch in sorted(make.bytes_to_unicode().items()):
        vocab[ch] = base + b
    for a, b in make.MERGES:
        vocab.setdefault(a + b, len(vocab))
    added = [_added(vocab[s], s) for s in k["first"]]
    n = len(vocab)
    added += [_added(n + j, s) for j, s in enumerate(k["last"])]
    if k["bos_template"]:
        bos = k["bos_template"]
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {bos: {"id": bos, "ids": [vocab[bos]], "tokens": [bos]}}}
    else:
        post = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    tj = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": k["split"]}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": k.get("ignore_merges", False),
                  "vocab": vocab, "merges": [[a, b] for a, b in make.MERGES]},
    }
    tc = dict(k["config"])
    tc["added_tokens_decoder"] = {str(a["id"]): _decoder_entry(a["content"]) for a in added}
    tc["clean_up_tokenization_spaces"] = False
    return tj, tc


def gemma_pieces():
    """Returns the Gemma-like SentencePiece vocabulary: (piece, score, type)
    in id order, and the merges as (left, right) in rank order."""
    pieces = [(s, 0.0, t) for s, t in GEMMA_SPECIALS]
    pieces += [("<0x%02X>" % b, 0.0, BYTE) for b in range(256)]
    n_merges = len(GEMMA_MERGES)
    pieces += [(c, float(-(n_merges + j)), NORMAL) for j, c in enumerate(GEMMA_CHARS)]
    known = {p for p, _, _ in pieces}
    for r, (a, b) in enumerate(GEMMA_MERGES):
        assert a in known and b in known, (a, b)
        if a + b not in known:
            pieces.append((a + b, float(-r), NORMAL))
            known.add(a + b)
    return pieces, GEMMA_MERGES


# Protocol-buffer encoding (proto2 wire format) of sentencepiece's
# ModelProto: pieces = 1 {piece = 1, score = 2, type = 3}, trainer_spec = 2
# {model_type = 3, vocab_size = 4, byte_fallback = 35, unk_id = 40,
# bos_id = 41, eos_id = 42, pad_id = 43, unk_piece = 45, bos_piece = 46,
# eos_piece = 47, pad_piece = 48}, normalizer_spec = 3 {name = 1,
# add_dummy_prefix = 3, remove_extra_whitespaces = 4,
# escape_whitespaces = 5}.

def _varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _field_len(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _field_int(field, v):
    return _varint(field << 3) + _varint(v)


def _field_float(field, v):
    return _varint(field << 3 | 5) + struct.pack("<f", v)


def gemma_model_proto():
    """Returns tokenizer.model: the SentencePiece ModelProto (BPE, byte fallback)."""
    pieces, _ = gemma_pieces()
    out = b""
    for piece, score, typ in pieces:
        out += _field_len(1, _field_len(1, piece.encode("utf-8")) + _field_float(2, score) + _field_int(3, typ))
    trainer = (_field_int(3, 2) + _field_int(4, len(pieces)) + _field_int(35, 1) + _field_int(40, 3) +
               _field_int(41, 2) + _field_int(42, 1) + _field_int(43, 0) + _field_len(45, b"<unk>") +
               _field_len(46, b"<bos>") + _field_len(47, b"<eos>") + _field_len(48, b"<pad>"))
    normalizer = _field_len(1, b"identity") + _field_int(3, 0) + _field_int(4, 0) + _field_int(5, 1)
    return out + _field_len(2, trainer) + _field_len(3, normalizer)


def parse_model_proto(data):
    """Decodes what gemma_model_proto writes: ([(piece, score, type)],
    {trainer field: value}, {normalizer field: value}). For the self-test."""
    def fields(buf):
        i = 0
        while i < len(buf):
            key, shift = 0, 0
            while True:
                b = buf[i]
                i += 1
                key |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            field, wire = key >> 3, key & 7
            if wire == 0:
                v, shift = 0, 0
                while True:
                    b = buf[i]
                    i += 1
                    v |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        break
            elif wire == 2:
                n, shift = 0, 0
                while True:
                    b = buf[i]
                    i += 1
                    n |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        break
                v, i = buf[i:i + n], i + n
            elif wire == 5:
                v, i = struct.unpack("<f", buf[i:i + 4])[0], i + 4
            else:
                raise ValueError("wire type %d" % wire)
            yield field, v

    pieces, trainer, normalizer = [], {}, {}
    for f, v in fields(data):
        if f == 1:
            p = dict(fields(v))
            pieces.append((p[1].decode("utf-8"), p[2], p.get(3, NORMAL)))
        elif f == 2:
            trainer = dict(fields(v))
        elif f == 3:
            normalizer = dict(fields(v))
    return pieces, trainer, normalizer


def gemma_files():
    """Returns (tokenizer.json, tokenizer_config.json, tokenizer.model)."""
    pieces, merges = gemma_pieces()
    vocab = {p: i for i, (p, _, _) in enumerate(pieces)}
    specials = [(s, vocab[s]) for s, _ in GEMMA_SPECIALS]
    added = [_added(i, s) for s, i in specials]
    tj = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<bos>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<bos>": {"id": "<bos>", "ids": [vocab["<bos>"]], "tokens": ["<bos>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for a, b in merges]},
    }
    tc = {"add_bos_token": True, "add_eos_token": False, "bos_token": "<bos>", "eos_token": "<eos>",
          "pad_token": "<pad>", "unk_token": "<unk>", "clean_up_tokenization_spaces": False,
          "spaces_between_special_tokens": False, "model_max_length": 32768, "sp_model_kwargs": {},
          "tokenizer_class": "GemmaTokenizer",
          "added_tokens_decoder": {str(i): _decoder_entry(s) for s, i in specials}}
    return tj, tc, gemma_model_proto()


KINDS = list(BPE_KINDS) + ["gemma3"]


def files(kind, slow=False):
    """Returns the tokenizer files of kind: {name: bytes}, name being what
    the checkpoint folder calls it (tokenizer.json, tokenizer_config.json,
    tokenizer.model). With slow, a byte-level kind's vocab.json and
    merges.txt too, as the Hub's GPT2Tokenizer checkpoints have them."""
    if kind == "gemma3":
        tj, tc, model = gemma_files()
        out = {"tokenizer.model": model}
    else:
        tj, tc = bpe_files(kind)
        out = {}
        if slow:
            out["vocab.json"] = json.dumps(tj["model"]["vocab"], ensure_ascii=False).encode("utf-8")
            out["merges.txt"] = ("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in tj["model"]["merges"])).encode("utf-8")
    out["tokenizer.json"] = json.dumps(tj, ensure_ascii=False, indent=1).encode("utf-8")
    out["tokenizer_config.json"] = json.dumps(tc, ensure_ascii=False, indent=1).encode("utf-8")
    return out


def n_tokens(kind):
    tj = json.loads(files(kind)["tokenizer.json"])
    ids = set(tj["model"]["vocab"].values()) | {a["id"] for a in tj["added_tokens"]}
    assert ids == set(range(len(ids))), kind  # dense ids
    return len(ids)


def token_id(kind, content):
    tj = json.loads(files(kind)["tokenizer.json"])
    for a in tj["added_tokens"]:
        if a["content"] == content:
            return a["id"]
    return tj["model"]["vocab"][content]


def self_test():
    """Checks what needs no tokenizers library: dense ids, specials where
    stated, and tokenizer.model decoding to gemma_pieces."""
    for kind in KINDS:
        n = n_tokens(kind)
        print(kind, n, "tokens")
    assert token_id("mistral", "<s>") == 1 and token_id("mistral", "</s>") == 2
    assert token_id("gemma3", "<bos>") == 2 and token_id("gemma3", "<end_of_turn>") == 6
    pieces, trainer, normalizer = parse_model_proto(gemma_model_proto())
    want, _ = gemma_pieces()
    assert [(p, t) for p, _, t in pieces] == [(p, t) for p, _, t in want]
    assert all(abs(a[1] - b[1]) < 1e-6 for a, b in zip(pieces, want))
    assert trainer[3] == 2 and trainer[35] == 1 and trainer[40] == 3 and trainer[46] == b"<bos>", trainer
    assert normalizer[1] == b"identity" and normalizer[3] == 0 and normalizer[5] == 1, normalizer
    print("tokenizer.model:", len(pieces), "pieces, ok")


if __name__ == "__main__":
    self_test()
