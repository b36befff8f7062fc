"""A small pure-Python reader of Qwen3's byte-level BPE `tokenizer.json`.

Only a stand-in for Hugging Face `tokenizers` on machines that lack it (the
CPU smoke test of train.py); the GPU run uses `tokenizers` itself. It
implements what the Qwen2/Qwen3 tokenizer.json uses and nothing more:
added tokens split out first (matched verbatim, longest first), NFC
normalisation, the pre-tokenizer's split regex (needs the `regex` module for
\\p{L}), GPT-2 byte-to-unicode mapping, and BPE by merge rank. It reproduces
testdata/golden/tokenizer_public.json (checked by `python3 train/pybpe.py`).

The interface is the subset of `tokenizers.Tokenizer` that train.py uses:
encode(text, add_special_tokens=False).ids, encode_batch(...), decode(ids),
token_to_id(s), get_vocab_size().
"""

import json
import sys
import unicodedata

import regex


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable chars."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


class Encoding:
    """What encode() returns: just the ids, as in `tokenizers`."""

    def __init__(self, ids):
        self.ids = ids


class PyBPETokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            t = json.load(f)
        m = t["model"]
        if m["type"] != "BPE" or t["pre_tokenizer"]["type"] != "Sequence":
            raise ValueError("not a Qwen2-style byte-level BPE tokenizer.json")
        self.vocab = m["vocab"]
        self.id_to_token = {i: s for s, i in self.vocab.items()}
        merges = [tuple(x) if isinstance(x, list) else tuple(x.split(" ")) for x in m["merges"]]
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        self.added = {a["content"]: a["id"] for a in t["added_tokens"]}
        for s, i in self.added.items():
            self.id_to_token[i] = s
        split = t["pre_tokenizer"]["pretokenizers"][0]
        self.pattern = regex.compile(split["pattern"]["Regex"])
        # Added tokens are cut out of the raw text first, longest first.
        self.added_re = regex.compile("|".join(regex.escape(s) for s in sorted(self.added, key=len, reverse=True)))
        self.byte_enc = bytes_to_unicode()
        self.byte_dec = {c: b for b, c in self.byte_enc.items()}
        self.cache = {}

    def get_vocab_size(self):
        return max(self.id_to_token) + 1

    def token_to_id(self, s):
        return self.added.get(s, self.vocab.get(s))

    def _bpe(self, word):
        """Ids of one pre-token (already byte-mapped), merging lowest rank first."""
        ids = self.cache.get(word)
        if ids is not None:
            return ids
        parts = list(word)
        while len(parts) > 1:
            best, best_rank = None, None
            for i in range(len(parts) - 1):
                r = self.ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = i, r
            if best is None:
                break
            # Merge every occurrence of that pair, left to right.
            a, b = parts[best], parts[best + 1]
            merged, i = [], 0
            while i < len(parts):
                if i < len(parts) - 1 and parts[i] == a and parts[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        ids = [self.vocab[p] for p in parts]
        self.cache[word] = ids
        return ids

    def _encode_plain(self, text, out):
        text = unicodedata.normalize("NFC", text)
        for piece in self.pattern.findall(text):
            word = "".join(self.byte_enc[b] for b in piece.encode("utf-8"))
            out.extend(self._bpe(word))

    def encode(self, text, add_special_tokens=False):
        out, pos = [], 0
        for m in self.added_re.finditer(text):
            if m.start() > pos:
                self._encode_plain(text[pos:m.start()], out)
            out.append(self.added[m.group(0)])
            pos = m.end()
        if pos < len(text):
            self._encode_plain(text[pos:], out)
        return Encoding(out)

    def encode_batch(self, texts, add_special_tokens=False):
        return [self.encode(t, add_special_tokens) for t in texts]

    def decode(self, ids, skip_special_tokens=False):
        parts = []
        for i in ids:
            s = self.id_to_token.get(int(i), "")
            if s in self.added:
                if not skip_special_tokens:
                    parts.append(s.encode("utf-8"))
            else:
                parts.append(bytes(self.byte_dec[c] for c in s))
        return b"".join(parts).decode("utf-8", errors="replace")


if __name__ == "__main__":
    # Self-check against the golden ids of HF tokenizers 0.23.
    tok = PyBPETokenizer(sys.argv[1] if len(sys.argv) > 1 else "testdata/qwen3-tokenizer/tokenizer.json")
    with open(sys.argv[2] if len(sys.argv) > 2 else "testdata/golden/tokenizer_public.json", encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    bad = 0
    for c in cases:
        ids = tok.encode(c["text"]).ids
        if ids != c["ids"] or tok.decode(ids) != c["decoded"]:
            bad += 1
            print("MISMATCH", repr(c["text"][:40]), ids[:12], c["ids"][:12])
    print(f"{len(cases) - bad} passed, {bad} failed")
    sys.exit(1 if bad else 0)
