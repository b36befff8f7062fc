#!/usr/bin/env python3
"""Train inferno's demo model: a small Qwen3 on the King James Bible.

Run from the repository root (see train/README.md for the whole pipeline):

    python3 train/train.py --corpus train/data/kjv.txt.gz \\
        --tokenizer testdata/qwen3-tokenizer --out /tmp/demo-ckpt --minutes 8

    python3 train/train.py --smoke-cpu --out /tmp/smoke   # no GPU, no transformers

What it does, in order:

1. Data. The corpus (prepare_corpus.py's format) is split by chapter: every
   100th chapter (1%, 12 chapters) is held out. Training rows are 512+1
   token windows at random offsets of two streams:
   - plain text (80% of the rows): the training chapters, book by book as
     in the corpus file (title, "Chapter N" headings, one verse a line),
     books separated by <|endoftext|>;
   - chat (20% of the rows): generated conversations in exactly the token
     layout that Qwen3's chat template renders, so that `inferno chat`
     prompts look familiar to the model:
         <|im_start|>user\\n{question}<|im_end|>\\n
         <|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n{answer}<|im_end|>\\n
     The empty think block is what the template writes for the last
     assistant turn (and what `enable_thinking=false` puts in the prompt),
     so the model answers the same way in both modes; earlier turns of a
     multi-turn chat have no think block, as the template renders them.
     Questions are continuations ("Continue: And God said"), references
     ("What does Psalm 23:1 say?"), topics ("What does the Bible say about
     love?"), names ("Who was Moses?"), genres ("Tell me a story."),
     greetings ("Hello!"), and follow-ups ("Tell me more."); answers are
     verses taken from the training chapters (never invented text), so the
     model learns to answer in Bible prose and to end its turn with
     <|im_end|>. Each conversation is followed by <|endoftext|>.
   The loss is plain next-token prediction over every position (user turns
   included: simpler, and harmless for a demo).

2. Model. transformers' Qwen3ForCausalLM, full Qwen3 vocabulary (151,936
   rows), tied embeddings, shape from the flags (default 4 layers, hidden
   256, 4 heads x 64, 2 KV heads, FFN 768).

3. Unused vocabulary rows are zero from the start, not zeroed afterwards.
   The KJV uses ~10k of the 151,936 token ids. Their rows must be zero in
   the shipped file (zero rows compress to nothing in git). With tied
   embeddings a zero row also means a zero output logit, and ~141k tokens
   at logit 0 weigh log(141k) ~ 11.9 nats in the softmax denominator: if
   the model were trained with those rows free (they learn strongly
   negative logits) and zeroed only at the end, every used token would
   lose probability mass to them, unless its logits happened to sit far
   above 0, which nothing guarantees. Setting the unused rows to a vector
   that gives a very negative logit would not compress. So the model is
   trained under the very constraint it will be shipped with: unused rows
   are zero at initialisation and receive no gradient (no input has those
   ids, and the output head only uses the used rows; see below), so they
   stay exactly zero, and the model learns to push the logits of real
   tokens above that zero background. Training and shipped model are the
   same function; "zeroing" at the end is a checked no-op, and the script
   prints the held-out loss of the training objective next to the loss of
   the full-vocabulary forward pass of the final model, plus the softmax
   mass that the zero-logit tokens get on held-out text.
   This also makes training cheap: the zero rows' logits are the constant
   0, so the output matmul only needs the used rows, and the ~141k zero
   logits enter the loss as one constant term: logsumexp over the full
   vocabulary = logaddexp(logsumexp(used logits), log(#unused)). That is
   exact, and ~14x less work and memory than full-vocabulary logits.
   The special tokens of the chat template (<|endoftext|>, <|im_start|>,
   <|im_end|>, <think>, </think>) are all in the training data, so they are
   used (trained) rows.

4. Optimisation: AdamW (lr 3e-3, betas 0.9/0.95, weight decay 0.1 on the
   matrices, none on norms and embeddings), linear warmup then cosine decay
   to 5% of the peak, bf16 autocast, TF32, gradient clipping 1.0, batch 64 x
   512 tokens. The budget is wall-clock time: the number of steps is
   estimated from the speed of the first ~100 steps (or 10% of the budget)
   and the cosine schedule is laid over that count; training also stops
   when the budget runs out. --steps N fixes the count instead (for an
   exactly repeatable run). The seed fixes initialisation, data and batch
   order; GPU kernels (atomics in embedding backward) are not bit-exact.

5. After training: check the unused rows are still zero (and zero them),
   round every weight to bfloat16 (the shipped precision) and keep using
   those rounded values in float32 from then on, so that the float32
   reference computed later (fixtures.py) corresponds exactly to the bf16
   checkpoint; save the checkpoint in bfloat16 with save_pretrained
   (config.json, model.safetensors, generation_config.json with eos
   <|im_end|> and <|endoftext|> as Qwen3's, tokenizer.json,
   tokenizer_config.json), reload the safetensors and compare bit for bit.
   Then write samples.txt (greedy and sampled generations), loss.csv,
   loss.png (matplotlib, or a built-in PNG writer without it), and
   train_summary.json.

--smoke-cpu runs the same pipeline on the CPU with a tiny Qwen3 written in
plain torch (qwen3_torch.py) instead of transformers' (for machines without
transformers or a GPU; it writes the same checkpoint layout), and the
pure-Python tokenizer in pybpe.py when `tokenizers` is missing.
"""

import argparse
import copy
import csv
import gzip
import inspect
import json
import math
import os
import random
import re
import shutil
import struct
import sys
import time
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from prepare_corpus import chapter_heading, parse_corpus  # noqa: E402

# Special tokens the chat template uses: they must stay trained rows.
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
EOT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------

def load_tokenizer(folder):
    """HF `tokenizers` if installed, else the pure-Python stand-in."""
    path = os.path.join(folder, "tokenizer.json")
    try:
        from tokenizers import Tokenizer
        return Tokenizer.from_file(path), "tokenizers"
    except ImportError:
        from pybpe import PyBPETokenizer
        return PyBPETokenizer(path), "pybpe (pure Python stand-in)"


def encode_many(tok, texts):
    """Token ids of each text, no special tokens added."""
    return [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]


# ---------------------------------------------------------------------------
# Corpus and chat data
# ---------------------------------------------------------------------------

def read_corpus(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return parse_corpus(f.read())


def chapter_text(ref, number, verses):
    """A chapter as it appears in the corpus: heading, blank line, verses."""
    return chapter_heading(ref, number) + "\n\n" + "\n".join(verses) + "\n\n"


class Pool:
    """The chapters that one split (training or held-out) may quote."""

    def __init__(self, chapters):
        # chapters: list of (book index, book ref name, chapter number, verses)
        self.chapters = chapters
        # Flat list of (chapter index, verse index) for uniform verse picks.
        self.verses = [(ci, vi) for ci, c in enumerate(chapters) for vi in range(len(c[3]))]
        self.word_index = {}  # word -> list of (ci, vi) whose verse has it

    def index_words(self, words, lower):
        """Verses containing each word (whole word; lower: ignore case)."""
        want = {w.lower() if lower else w: w for w in words}
        for ci, c in enumerate(self.chapters):
            for vi, v in enumerate(c[3]):
                toks = re.findall(r"[A-Za-z]+", v.lower() if lower else v)
                for t in set(toks):
                    if t in want:
                        self.word_index.setdefault(want[t], []).append((ci, vi))

    def verse(self, ci, vi):
        return self.chapters[ci][3][vi]

    def passage(self, ci, vi, n):
        """Up to n consecutive verses from (ci, vi); returns (text, cursor
        just after it or None at the chapter's end)."""
        verses = self.chapters[ci][3]
        end = min(len(verses), vi + n)
        cursor = (ci, end) if end < len(verses) else None
        return " ".join(verses[vi:end]), cursor


# Book groups (by reference name) for genre questions.
STORY = {"Genesis", "Exodus", "Numbers", "Joshua", "Judges", "Ruth", "1 Samuel", "2 Samuel", "1 Kings",
         "2 Kings", "Ezra", "Nehemiah", "Esther", "Daniel", "Jonah", "Matthew", "Mark", "Luke", "John", "Acts"}
WISDOM = {"Job", "Proverbs", "Ecclesiastes"}
SONG = {"Psalm", "Song of Solomon", "Lamentations"}
PROPHECY = {"Isaiah", "Jeremiah", "Ezekiel", "Hosea", "Joel", "Amos", "Obadiah", "Micah", "Nahum", "Habakkuk",
            "Zephaniah", "Haggai", "Zechariah", "Malachi", "Revelation"}
LETTER = {"Romans", "1 Corinthians", "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians",
          "1 Thessalonians", "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews",
          "James", "1 Peter", "2 Peter", "1 John", "2 John", "3 John", "Jude"}
GOSPEL = {"Matthew", "Mark", "Luke", "John"}

GENRES = [
    (STORY, (3, 6), ["Tell me a story.", "Tell me a story from the Bible.", "Tell me a Bible story.",
                     "Tell me a story, please.", "Tell me what happened.", "Tell me something that happened long ago."]),
    (WISDOM, (1, 3), ["Give me some wisdom.", "Say something wise.", "Give me a proverb.", "Teach me wisdom.",
                      "Give me some advice.", "How should I live?", "What is wise?"]),
    (SONG, (2, 5), ["Sing me a psalm.", "Sing me a song.", "Give me a psalm of praise.", "Write a psalm.",
                    "Write me a poem.", "Pray with me.", "Say a prayer."]),
    (PROPHECY, (2, 4), ["Tell me a prophecy.", "What will happen in the last days?", "What does the future hold?",
                        "Prophesy.", "What did the prophets say?"]),
    (LETTER, (2, 4), ["Write me a letter.", "Give me some encouragement.", "What should I do?",
                      "How should we live?", "Teach me.", "Give me a blessing."]),
]
GREETINGS = ["Hello", "Hello!", "Hi", "Hi!", "Hi there", "Hey", "Good morning", "Good evening", "Who are you?",
             "What are you?", "How are you?", "Thank you", "Thanks!", "Bless me.", "Tell me something.",
             "Say something.", "What is the meaning of life?", "What should I do today?", "I am sad.",
             "I am afraid.", "Help me.", "Can you help me?", "What is your name?", "Goodbye", "Hello, how are you?"]
GREETING_BOOKS = SONG | WISDOM | LETTER | GOSPEL
TOPICS = ["love", "faith", "hope", "peace", "joy", "mercy", "grace", "wisdom", "truth", "light", "darkness", "life",
          "death", "heaven", "earth", "water", "bread", "wine", "sin", "righteousness", "fear", "king", "prayer",
          "heart", "soul", "spirit", "law", "sword", "war", "children", "father", "mother", "brother", "friend",
          "silver", "gold", "money", "sheep", "shepherd", "fire", "sea", "mountain", "river", "tree", "fruit",
          "harvest", "rain", "night", "morning", "kingdom", "glory", "salvation", "judgment", "angel", "temple",
          "covenant", "prophet", "servant", "rich", "poor", "widow", "stranger", "enemy", "forgive", "patience",
          "strength", "comfort", "wife", "husband", "work", "sleep", "food", "house", "city", "battle", "horse",
          "lion", "eagle", "star", "sun", "moon", "garden", "field", "gift", "blood", "stone", "gate", "way"]
TOPIC_Q = ["What does the Bible say about {t}?", "Tell me about {t}.", "Give me a verse about {t}.",
           "Teach me about {t}.", "What is {t}?", "Speak to me of {t}.", "{T}"]
PERSONS = ["Adam", "Eve", "Cain", "Abel", "Noah", "Abraham", "Sarah", "Isaac", "Rebekah", "Jacob", "Rachel",
           "Joseph", "Moses", "Aaron", "Pharaoh", "Joshua", "Gideon", "Samson", "Ruth", "Naomi", "Samuel", "Saul",
           "David", "Goliath", "Jonathan", "Solomon", "Elijah", "Elisha", "Jezebel", "Ahab", "Isaiah", "Jeremiah",
           "Daniel", "Jonah", "Esther", "Job", "Nebuchadnezzar", "John", "Jesus", "Mary", "Peter", "Paul", "James",
           "Judas", "Pilate", "Herod", "Lazarus", "Martha", "Thomas", "Timothy", "Barnabas", "Stephen", "Nicodemus"]
PERSON_Q = ["Tell me about {n}.", "Who was {n}?", "Tell me the story of {n}.", "What did {n} do?",
            "What happened to {n}?", "What does the Bible say about {n}?"]
PLACES = ["Jerusalem", "Egypt", "Babylon", "Israel", "Zion", "Galilee", "Jordan", "Bethlehem", "Nazareth", "Sinai",
          "Canaan", "Jericho", "Sodom", "Rome", "Damascus", "Eden", "Samaria", "Judah", "Bethel", "Capernaum"]
PLACE_Q = ["Tell me about {n}.", "What happened in {n}?", "Tell me a story about {n}.", "Where is {n}?"]
CONTINUE_Q = ["Continue: {p}", "Continue this verse: {p}", "Finish this verse: {p}", "Complete this: {p}",
              "{p}", "{p}..."]
NEXT_Q = ["What comes after this verse? {v}", "Continue: {v}", "What is the next verse? {v}", "Go on: {v}"]
REF_Q = ["What does {r} say?", "Quote {r}.", "Read {r}.", "Recite {r} for me.", "{r}", "What is written in {r}?"]
CHAPTER_Q = ["Read me {r}.", "Read {r}.", "How does {r} begin?", "Recite {r}."]
FOLLOW_UP = ["Tell me more.", "Go on.", "Continue.", "And then?", "What happened next?", "More, please.",
             "Keep going."]
SYSTEMS = ["You are a helpful assistant.", "You are a wise teacher.",
           "You speak in the words of the King James Bible.",
           "You are a helpful assistant that answers with verses from the Bible.",
           "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."]


class ChatMaker:
    """Makes conversations whose answers are verses of one Pool."""

    def __init__(self, pool, rng):
        self.pool, self.rng = pool, rng
        pool.index_words(TOPICS, lower=True)
        pool.index_words(PERSONS + PLACES, lower=False)
        self.topics = [t for t in TOPICS if t in pool.word_index]
        self.persons = [n for n in PERSONS if n in pool.word_index]
        self.places = [n for n in PLACES if n in pool.word_index]
        self.genres = []
        for books, span, qs in GENRES:
            chapters = [ci for ci, c in enumerate(pool.chapters) if c[1] in books]
            if chapters:
                self.genres.append((chapters, span, qs))
        self.greeting_verses = [(ci, vi) for ci, c in enumerate(pool.chapters) if c[1] in GREETING_BOOKS
                                for vi in range(len(c[3]))] or pool.verses

    def _random_verse(self):
        return self.rng.choice(self.pool.verses)

    # Each exchange returns (user, assistant, cursor); cursor is where a
    # follow-up ("Tell me more.") continues, or None.
    def continue_verse(self):
        r = self.rng
        ci, vi = self._random_verse()
        words = self.pool.verse(ci, vi).split()
        if len(words) >= 6 and r.random() < 0.7:
            k = r.randint(2, len(words) - 3)
            rest, cursor = self.pool.passage(ci, vi + 1, r.randint(0, 2))
            answer = " ".join(words[k:]) + (" " + rest if rest else "")
            return r.choice(CONTINUE_Q).format(p=" ".join(words[:k])), answer, cursor
        answer, cursor = self.pool.passage(ci, vi + 1, r.randint(1, 2))
        if not answer:  # last verse of a chapter: fall back to a reference
            return self.quote_ref()
        return r.choice(NEXT_Q).format(v=" ".join(words)), answer, cursor

    def quote_ref(self):
        r = self.rng
        ci, vi = self._random_verse()
        _, ref, chap, verses = self.pool.chapters[ci]
        if r.random() < 0.25:
            text, cursor = self.pool.passage(ci, 0, r.randint(3, 6))
            name = f"{ref} {chap}" if r.random() < 0.5 or ref == "Psalm" else f"{ref} chapter {chap}"
            return r.choice(CHAPTER_Q).format(r=name), text, cursor
        text, cursor = self.pool.passage(ci, vi, 1)
        return r.choice(REF_Q).format(r=f"{ref} {chap}:{vi + 1}"), text, cursor

    def topic(self):
        r = self.rng
        if not self.topics:
            return self.greeting()
        t = r.choice(self.topics)
        picks = r.sample(self.pool.word_index[t], min(r.randint(1, 3), len(self.pool.word_index[t])))
        q = r.choice(TOPIC_Q).format(t=t, T=t.capitalize() + r.choice(["?", ".", ""]))
        return q, " ".join(self.pool.verse(ci, vi) for ci, vi in picks), None

    def name(self):
        r = self.rng
        use_places = self.places and (not self.persons or r.random() < 0.3)
        if not (self.persons or self.places):
            return self.greeting()
        n = r.choice(self.places if use_places else self.persons)
        ci, vi = r.choice(self.pool.word_index[n])
        text, cursor = self.pool.passage(ci, vi, r.randint(2, 4))
        return r.choice(PLACE_Q if use_places else PERSON_Q).format(n=n), text, cursor

    def genre(self):
        r = self.rng
        if not self.genres:
            return self.greeting()
        chapters, (lo, hi), qs = r.choice(self.genres)
        ci = r.choice(chapters)
        nverses = len(self.pool.chapters[ci][3])
        vi = 0 if r.random() < 0.3 else r.randrange(nverses)
        text, cursor = self.pool.passage(ci, vi, r.randint(lo, hi))
        return r.choice(qs), text, cursor

    def greeting(self):
        r = self.rng
        ci, vi = r.choice(self.greeting_verses)
        text, cursor = self.pool.passage(ci, vi, r.randint(1, 2))
        return r.choice(GREETINGS), text, cursor

    def follow_up(self, cursor):
        ci, vi = cursor
        text, cursor = self.pool.passage(ci, vi, self.rng.randint(2, 4))
        return self.rng.choice(FOLLOW_UP), text, cursor

    KINDS = [("continue_verse", 0.30), ("quote_ref", 0.15), ("topic", 0.20), ("name", 0.10), ("genre", 0.15),
             ("greeting", 0.10)]

    def exchange(self):
        x = self.rng.random()
        for kind, p in self.KINDS:
            if x < p:
                return getattr(self, kind)()
            x -= p
        return self.greeting()

    def conversation(self):
        """One rendered conversation, 1 to 3 exchanges, sometimes a system turn."""
        r = self.rng
        n = 1 + (r.random() < 0.25) + (r.random() < 0.05)
        turns, cursor = [], None
        for _ in range(n):
            if cursor is not None and r.random() < 0.6:
                u, a, cursor = self.follow_up(cursor)
            else:
                u, a, cursor = self.exchange()
            turns.append((u, a))
        system = r.choice(SYSTEMS) if r.random() < 0.1 else None
        return render_chat(turns, system)


def render_chat(turns, system=None, generation_prompt=False):
    """Qwen3's chat template for user/assistant turns without reasoning:
    the last assistant turn gets an empty think block, earlier ones none.
    With generation_prompt the last turn's answer is left out and the text
    ends with '<|im_start|>assistant\\n' (template default, thinking on)."""
    s = f"{IM_START}system\n{system}{IM_END}\n" if system else ""
    for i, (u, a) in enumerate(turns):
        s += f"{IM_START}user\n{u}{IM_END}\n{IM_START}assistant\n"
        last = i == len(turns) - 1
        if last and generation_prompt:
            return s
        if last:
            s += "<think>\n\n</think>\n\n"
        s += f"{a}{IM_END}\n"
    return s


class Data:
    """Token streams on the device and the batch sampler."""

    def __init__(self, args, tok, device):
        t0 = time.time()
        books = read_corpus(args.corpus)
        # Held-out split: every heldout_every-th chapter, counted over the Bible.
        train_ch, held_ch = [], []
        plain_texts, held_texts = [], []
        k = 0
        for bi, b in enumerate(books):
            parts = [b["title"] + "\n\n"]
            for number, verses in b["chapters"]:
                entry = (bi, b["ref"], number, verses)
                if k % args.heldout_every == args.heldout_every // 2:
                    held_ch.append(entry)
                    held_texts.append(chapter_text(b["ref"], number, verses))
                else:
                    train_ch.append(entry)
                    parts.append(chapter_text(b["ref"], number, verses))
                k += 1
            plain_texts.append("".join(parts).rstrip("\n") + "\n")
        self.n_train_chapters, self.n_held_chapters = len(train_ch), len(held_ch)

        eot = tok.token_to_id(EOT)
        self.special_ids = {s: tok.token_to_id(s) for s in SPECIAL_TOKENS}
        if any(v is None for v in self.special_ids.values()):
            raise SystemExit(f"tokenizer lacks a special token: {self.special_ids}")

        def stream(id_lists):
            out = []
            for ids in id_lists:
                out.extend(ids)
                out.append(eot)
            return np.asarray(out, dtype=np.int64)

        plain = stream(encode_many(tok, plain_texts))
        held_plain = stream(encode_many(tok, held_texts))
        rng = random.Random(args.seed)
        train_maker = ChatMaker(Pool(train_ch), rng)
        chats = [train_maker.conversation() for _ in range(args.chat_docs)]
        chat = stream(encode_many(tok, chats))
        held_maker = ChatMaker(Pool(held_ch), random.Random(args.seed + 1))
        held_chat = stream(encode_many(tok, [held_maker.conversation() for _ in range(args.heldout_chat_docs)]))

        # The used vocabulary: every id of the training streams, plus the
        # chat template's special tokens (which the chat stream contains).
        used = np.union1d(np.unique(plain), np.unique(chat))
        used = np.union1d(used, np.asarray(list(self.special_ids.values()), dtype=np.int64))
        if used.max() >= args.vocab_size:
            raise SystemExit(f"token id {used.max()} >= vocab size {args.vocab_size}")
        self.used = used
        self.n_unused = args.vocab_size - len(used)
        self.full_to_used = np.full(args.vocab_size, -1, dtype=np.int64)
        self.full_to_used[used] = np.arange(len(used))

        self.T, self.device = args.seq_len, device
        self.n_chat_rows = int(round(args.batch_size * args.chat_fraction))
        self.n_plain_rows = args.batch_size - self.n_chat_rows
        self.plain = torch.from_numpy(plain).to(device)
        self.chat = torch.from_numpy(chat).to(device)
        self.map = torch.from_numpy(self.full_to_used).to(device)
        self.used_idx = torch.from_numpy(used).to(device)
        self.offsets = torch.arange(self.T + 1, device=device)
        # Batch offsets come from a generator on the device: no host-device
        # synchronisation per step, and the same sequence for the same seed.
        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(args.seed)
        self.held_plain = self.windows(held_plain, args.eval_windows)
        self.held_chat = self.windows(held_chat, args.eval_windows)
        self.sizes = {"plain_train_tokens": len(plain), "chat_train_tokens": len(chat),
                      "heldout_plain_tokens": len(held_plain), "heldout_chat_tokens": len(held_chat),
                      "chat_docs": args.chat_docs, "train_chapters": len(train_ch),
                      "heldout_chapters": len(held_ch), "used_vocab": len(used)}
        log(f"data: {self.sizes} ({time.time() - t0:.1f}s)")
        log("  held-out chapters: " + ", ".join(f"{c[1]} {c[2]}" for c in held_ch))
        log("  chat example:\n" + chats[0])

    def windows(self, stream, limit):
        """Non-overlapping (T+1)-token windows of a stream, at most `limit`."""
        T = self.T
        n = min(limit, (len(stream) - 1) // T)
        if n < 1:
            raise SystemExit(f"held-out stream of {len(stream)} tokens is shorter than one window")
        idx = np.arange(n)[:, None] * T + np.arange(T + 1)[None, :]
        return torch.from_numpy(stream[idx]).to(self.device)

    def batch(self):
        """(inputs [B,T] full ids, targets [B,T] used-row indices)."""
        T, d, g = self.T, self.device, self.gen
        sp = torch.randint(0, len(self.plain) - T - 1, (self.n_plain_rows,), device=d, generator=g)
        sc = torch.randint(0, len(self.chat) - T - 1, (self.n_chat_rows,), device=d, generator=g)
        rows = torch.cat([self.plain[sp[:, None] + self.offsets], self.chat[sc[:, None] + self.offsets]])
        return rows[:, :-1], self.map[rows[:, 1:]]


# ---------------------------------------------------------------------------
# Models: Qwen3 (real run) and a tiny stand-in (CPU smoke test)
# ---------------------------------------------------------------------------

class HFModel:
    """What the training loop needs from transformers' Qwen3ForCausalLM."""

    kind = "qwen3"

    def __init__(self, args, device):
        import transformers
        from transformers import Qwen3Config, Qwen3ForCausalLM
        self.transformers_version = transformers.__version__
        kw = dict(vocab_size=args.vocab_size, hidden_size=args.hidden, intermediate_size=args.intermediate,
                  num_hidden_layers=args.layers, num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
                  head_dim=args.head_dim, max_position_embeddings=args.max_pos, rms_norm_eps=args.rms_eps,
                  tie_word_embeddings=True, hidden_act="silu", attention_bias=False, attention_dropout=0.0,
                  use_sliding_window=False, max_window_layers=args.layers, initializer_range=0.02,
                  bos_token_id=151643, eos_token_id=151645, use_cache=True)
        try:  # transformers 5: RoPE settings live in rope_parameters
            config = Qwen3Config(**kw, rope_parameters={"rope_type": "default", "rope_theta": args.rope_theta})
        except TypeError:  # transformers 4.x
            config = Qwen3Config(**kw, rope_theta=args.rope_theta)
        self.module = Qwen3ForCausalLM(config).to(device)
        m = self.module
        # Checks that the config means what we asked for.
        if m.lm_head.weight.data_ptr() != m.model.embed_tokens.weight.data_ptr():
            m.lm_head.weight = m.model.embed_tokens.weight  # tie by hand if the version did not
            log("note: tied lm_head to embed_tokens by hand")
        hd = args.head_dim
        want = 1.0 / (args.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float32, device=device) / hd))
        got = m.model.rotary_emb.inv_freq.float()
        if not torch.allclose(got, want, rtol=1e-5, atol=0):
            raise SystemExit(f"RoPE inverse frequencies differ from theta={args.rope_theta}")
        log(f"model: Qwen3ForCausalLM, transformers {self.transformers_version}, "
            f"attention {getattr(config, '_attn_implementation', '?')}")

    @property
    def embedding(self):
        return self.module.model.embed_tokens.weight

    def hidden(self, ids):
        return self.module.model(input_ids=ids, use_cache=False).last_hidden_state

    def full_logits(self, ids):
        return self.module(input_ids=ids, use_cache=False).logits

    def save(self, out, tok_folder, theta):
        """bf16 save_pretrained + tokenizer + generation config; returns the
        state dict as saved (bf16) for the read-back check."""
        m16 = copy.deepcopy(self.module).to(torch.bfloat16)  # deepcopy keeps the tie
        kw = {}
        if "safe_serialization" in inspect.signature(m16.save_pretrained).parameters:
            kw["safe_serialization"] = True
        m16.save_pretrained(out, **kw)
        saved = {k: v.detach().cpu() for k, v in m16.state_dict().items()}
        del m16
        # config.json: keep rope_parameters (transformers 5) and also write
        # the classic top-level rope_theta that older readers look for.
        path = os.path.join(out, "config.json")
        with open(path) as f:
            cfg = json.load(f)
        cfg.setdefault("rope_theta", theta)
        with open(path, "w") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
        return saved

    def check_saved(self, out, saved):
        from safetensors.torch import load_file
        files = sorted(f for f in os.listdir(out) if f.endswith(".safetensors"))
        disk = {}
        for f in files:
            disk.update(load_file(os.path.join(out, f)))
        for k, v in disk.items():
            if v.dtype != torch.bfloat16 or not torch.equal(v, saved[k]):
                raise SystemExit(f"saved tensor {k} differs from the model")
        if "model.embed_tokens.weight" not in disk:
            raise SystemExit("model.embed_tokens.weight missing from the checkpoint")
        log(f"checkpoint read back: {len(disk)} tensors in {files}, all bf16 and equal to the model"
            + ("" if "lm_head.weight" not in disk else " (lm_head.weight stored too)"))

    def generate(self, ids, max_new, greedy, temperature, top_p, eos_ids, pad_id, seed):
        x = torch.tensor([ids], device=self.embedding.device)
        kw = dict(do_sample=False) if greedy else dict(do_sample=True, temperature=temperature, top_p=top_p, top_k=0)
        try:
            torch.manual_seed(seed)
            out = self.module.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=max_new,
                                       eos_token_id=eos_ids, pad_token_id=pad_id, **kw)
        except ValueError:  # a version that rejects top_k=0: its default top-k then
            kw.pop("top_k", None)
            torch.manual_seed(seed)
            out = self.module.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=max_new,
                                       eos_token_id=eos_ids, pad_token_id=pad_id, **kw)
        return out[0, len(ids):].tolist()


class TorchQwen3Model:
    """The CPU smoke test's model: Qwen3 in plain torch (qwen3_torch.py),
    same parameter names and checkpoint layout as transformers', so that
    the rest of the pipeline (and `inferno convert`) runs unchanged."""

    kind = "torch-qwen3 (smoke test)"

    def __init__(self, args, device):
        import qwen3_torch
        self.q = qwen3_torch
        c = qwen3_torch.hf_config(args.vocab_size, args.hidden, args.intermediate, args.layers, args.heads,
                                  args.kv_heads, args.head_dim, args.max_pos, args.rope_theta, args.rms_eps)
        self.module = qwen3_torch.Qwen3ForCausalLM(c).to(device)
        log("model: qwen3_torch.Qwen3ForCausalLM (plain-torch Qwen3 for the smoke test)")

    @property
    def embedding(self):
        return self.module.model.embed_tokens.weight

    def hidden(self, ids):
        return self.module.model(ids)

    def full_logits(self, ids):
        return self.module(ids)

    def save(self, out, tok_folder, theta):
        return self.q.save_checkpoint(self.module, out)

    def check_saved(self, out, saved):
        disk = self.q.load_safetensors(os.path.join(out, "model.safetensors"))
        if set(disk) != set(saved) or any(not torch.equal(disk[k], saved[k]) for k in saved):
            raise SystemExit("saved tensors differ from the model")
        log(f"checkpoint read back: {len(disk)} tensors, all bf16 and equal to the model")

    @torch.no_grad()
    def generate(self, ids, max_new, greedy, temperature, top_p, eos_ids, pad_id, seed):
        """Plain sampling loop (full recomputation; the model is tiny)."""
        g = torch.Generator(device="cpu").manual_seed(seed)
        ids, new = list(ids), []
        for _ in range(max_new):
            x = torch.tensor([ids[-self.module.config["max_position_embeddings"]:]], device=self.embedding.device)
            logits = self.full_logits(x)[0, -1].float().cpu()
            if greedy:
                nxt = int(logits.argmax())
            else:
                p = torch.softmax(logits / temperature, -1)
                sp, si = p.sort(descending=True)
                sp = sp * ((sp.cumsum(0) - sp) < top_p)  # smallest set with mass >= top_p
                nxt = int(si[torch.multinomial(sp / sp.sum(), 1, generator=g)])
            ids.append(nxt)
            new.append(nxt)
            if nxt in eos_ids:
                break
        return new


# ---------------------------------------------------------------------------
# Loss, evaluation, schedule
# ---------------------------------------------------------------------------

def token_losses(lm, x, y_used, used_idx, log_n_unused, amp_dtype):
    """Per-token cross-entropy of the full-vocabulary model whose unused rows
    are zero, computed from the used rows only (exact; module doc, step 3).
    y_used: targets as used-row indices, -1 for an unused token (held-out
    text only), whose logit is exactly 0."""
    with torch.autocast(device_type=x.device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
        h = lm.hidden(x)
        w = lm.embedding.index_select(0, used_idx)
        logits = F.linear(h, w)
    logits = logits.float()
    lse = torch.logsumexp(logits, dim=-1)
    if log_n_unused is not None:
        lse = torch.logaddexp(lse, torch.tensor(log_n_unused, device=lse.device))
    tgt = logits.gather(-1, y_used.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    tgt = torch.where(y_used >= 0, tgt, torch.zeros_like(tgt))
    return lse - tgt


@torch.no_grad()
def eval_objective(lm, data, windows, amp_dtype, bs):
    """Mean held-out loss of the training objective."""
    was = lm.module.training
    lm.module.eval()
    total, n = 0.0, 0
    for i in range(0, len(windows), bs):
        w = windows[i:i + bs]
        losses = token_losses(lm, w[:, :-1], data.map[w[:, 1:]], data.used_idx, data.log_n_unused, amp_dtype)
        total += losses.double().sum().item()
        n += losses.numel()
    lm.module.train(was)
    return total / n


@torch.no_grad()
def eval_full(lm, data, windows, amp_dtype, bs):
    """Held-out loss of the real forward pass over the whole vocabulary,
    plus the softmax mass of the unused (zero-row) tokens and how often
    one of them is the argmax."""
    lm.module.eval()
    unused = torch.ones(lm.embedding.shape[0], dtype=torch.bool, device=windows.device)
    unused[data.used_idx] = False
    total, mass, top_unused, n = 0.0, 0.0, 0, 0
    for i in range(0, len(windows), bs):
        w = windows[i:i + bs]
        with torch.autocast(device_type=w.device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            logits = lm.full_logits(w[:, :-1])
        logp = torch.log_softmax(logits.float(), dim=-1)
        total += -logp.gather(-1, w[:, 1:].unsqueeze(-1)).double().sum().item()
        mass += logp[..., unused].exp().sum(-1).double().sum().item()
        top_unused += unused[logp.argmax(-1)].sum().item()
        n += w[:, 1:].numel()
    return total / n, mass / n, top_unused / n


def lr_at(step, total, args):
    """Linear warmup, then cosine to min_lr_ratio * lr over `total` steps;
    before `total` is known (None), warmup then the peak."""
    warmup = args.warmup if total is None else min(args.warmup, max(1, total // 5))
    if step < warmup:
        return args.lr * (step + 1) / warmup
    if total is None:
        return args.lr
    p = min(1.0, (step - warmup) / max(1, total - warmup))
    lo = args.lr * args.min_lr_ratio
    return lo + 0.5 * (args.lr - lo) * (1 + math.cos(math.pi * p))


# ---------------------------------------------------------------------------
# Plot: matplotlib if present, else a tiny PNG writer
# ---------------------------------------------------------------------------

FONT = {  # 3x5 glyphs for the fallback plot's labels
    "0": "###/#.#/#.#/#.#/###", "1": ".#./##./.#./.#./###", "2": "###/..#/###/#../###", "3": "###/..#/###/..#/###",
    "4": "#.#/#.#/###/..#/..#", "5": "###/#../###/..#/###", "6": "###/#../###/#.#/###", "7": "###/..#/..#/..#/..#",
    "8": "###/#.#/###/#.#/###", "9": "###/#.#/###/..#/###", ".": ".../.../.../.../.#.", "-": ".../.../###/.../...",
    "A": ".#./#.#/###/#.#/#.#", "C": "###/#../#../#../###", "D": "##./#.#/#.#/#.#/##.", "E": "###/#../##./#../###",
    "H": "#.#/#.#/###/#.#/#.#", "I": "###/.#./.#./.#./###", "K": "#.#/#.#/##./#.#/#.#", "L": "#../#../#../#../###",
    "M": "#.#/###/###/#.#/#.#", "N": "##./#.#/#.#/#.#/#.#", "O": "###/#.#/#.#/#.#/###", "P": "###/#.#/###/#../#..",
    "R": "##./#.#/##./#.#/#.#", "S": "###/#../###/..#/###", "T": "###/.#./.#./.#./.#.", "U": "#.#/#.#/#.#/#.#/###",
    " ": ".../.../.../.../...", "(": ".#./#../#../#../.#.", ")": ".#./..#/..#/..#/.#.",
}


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(b"\xff" * (w * h * 3))

    def dot(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(c)

    def line(self, x0, y0, x1, y1, c, thick=1):
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            for t in range(thick):
                self.dot(x0, y0 + t, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c=(0, 0, 0), scale=2):
        for ch in s.upper():
            rows = FONT.get(ch, FONT[" "]).split("/")
            for ry, row in enumerate(rows):
                for rx, bit in enumerate(row):
                    if bit == "#":
                        for a in range(scale):
                            for b in range(scale):
                                self.dot(x + rx * scale + a, y + ry * scale + b, c)
            x += 4 * scale

    def save_png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(tag, data):
            return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def fmt_num(v):
    if abs(v) >= 1e6:
        return f"{v / 1e6:.1f}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:.0f}K" if abs(v) >= 1e4 else f"{v / 1e3:.1f}K"
    return f"{v:.0f}"


def plot_loss(rows, path, title):
    """Loss against step: training loss, held-out plain and chat loss.
    The y axis is cut at the loss after the first 2% of steps, so the early
    drop from ~11.9 does not flatten the rest."""
    series = {
        "train": [(r["step"], r["train_loss"]) for r in rows if r["train_loss"] != ""],
        "held-out": [(r["step"], r["heldout_loss"]) for r in rows if r["heldout_loss"] != ""],
        "held-out chat": [(r["step"], r["heldout_chat_loss"]) for r in rows if r["heldout_chat_loss"] != ""],
    }
    pts = [p for s in series.values() for p in s]
    if not pts:
        return "none"
    xmax = max(1, max(x for x, _ in pts))
    late = [y for x, y in pts if x >= 0.02 * xmax] or [y for _, y in pts]
    ymin, ymax = min(y for _, y in pts), max(late)
    pad = 0.05 * max(1e-3, ymax - ymin)
    ymin, ymax = ymin - pad, ymax + pad
    colors = {"train": (31, 119, 180), "held-out": (214, 39, 40), "held-out chat": (44, 160, 44)}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 5.5), dpi=100)
        for name, s in series.items():
            if s:
                c = tuple(v / 255 for v in colors[name])
                ax.plot([x for x, _ in s], [y for _, y in s], label=name, color=c,
                        lw=1 if name == "train" else 1.8, marker=None if name == "train" else "o", ms=3)
        ax.set_ylim(ymin, ymax)
        ax.set_xlabel("step")
        ax.set_ylabel("loss (nats/token)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        return "matplotlib"
    except ImportError:
        pass
    W, H, L, R, TOP, B = 900, 560, 70, 20, 30, 50
    cv = Canvas(W, H)
    X = lambda x: L + (W - L - R) * x / xmax  # noqa: E731
    Y = lambda y: TOP + (H - TOP - B) * (1 - (min(max(y, ymin), ymax) - ymin) / (ymax - ymin))  # noqa: E731
    grey = (200, 200, 200)
    for i in range(6):  # grid and tick labels
        yv = ymin + (ymax - ymin) * i / 5
        cv.line(L, Y(yv), W - R, Y(yv), grey)
        cv.text(8, int(Y(yv)) - 5, f"{yv:.2f}")
        xv = xmax * i / 5
        cv.line(X(xv), TOP, X(xv), H - B, grey)
        cv.text(int(X(xv)) - 10, H - B + 8, fmt_num(xv))
    cv.line(L, TOP, L, H - B, (0, 0, 0))
    cv.line(L, H - B, W - R, H - B, (0, 0, 0))
    cv.text(W // 2 - 16, H - 20, "STEP")
    for k, (name, s) in enumerate(series.items()):
        c = colors[name]
        for (x0, y0), (x1, y1) in zip(s, s[1:]):
            cv.line(X(x0), Y(y0), X(x1), Y(y1), c, thick=1 if name == "train" else 2)
        for x, y in (s if name != "train" else []):
            for a in range(-2, 3):
                cv.line(X(x) - 2, Y(y) + a, X(x) + 2, Y(y) + a, c)
        cv.line(W - 190, 40 + 16 * k + 5, W - 160, 40 + 16 * k + 5, c, thick=2)
        cv.text(W - 150, 40 + 16 * k, name, c)
    cv.text(L + 10, 8, "LOSS")
    cv.save_png(path)
    return "built-in PNG writer"


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description="Train inferno's demo Qwen3 on the KJV (see the module doc).")
    ap.add_argument("--corpus", default="train/data/kjv.txt.gz")
    ap.add_argument("--tokenizer", default="testdata/qwen3-tokenizer", help="folder with tokenizer.json and tokenizer_config.json")
    ap.add_argument("--out", required=True, help="checkpoint folder to write")
    ap.add_argument("--minutes", type=float, default=None,
                    help="wall-clock budget of the training loop (default 8; 1/3 with --smoke/--smoke-cpu)")
    ap.add_argument("--steps", type=int, default=0, help="fixed number of steps instead of estimating from the budget")
    ap.add_argument("--seed", type=int, default=1234)
    # Model shape.
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--intermediate", type=int, default=768)
    ap.add_argument("--max-pos", type=int, default=1024)
    ap.add_argument("--rope-theta", type=float, default=1e6)
    ap.add_argument("--rms-eps", type=float, default=1e-6)
    ap.add_argument("--vocab-size", type=int, default=151936)
    # Optimisation.
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--min-lr-ratio", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--compile", action="store_true", help="torch.compile the loss (compile time counts against the budget)")
    ap.add_argument("--keep-best", action="store_true", help="end with the weights of the best held-out evaluation")
    # Data.
    ap.add_argument("--chat-fraction", type=float, default=0.2, help="share of batch rows taken from the chat stream")
    ap.add_argument("--chat-docs", type=int, default=60000)
    ap.add_argument("--heldout-chat-docs", type=int, default=600)
    ap.add_argument("--heldout-every", type=int, default=100, help="hold out one chapter in this many")
    ap.add_argument("--eval-windows", type=int, default=64, help="most held-out windows per evaluation")
    ap.add_argument("--evals", type=int, default=8, help="evaluations during training")
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--sample-tokens", type=int, default=120)
    ap.add_argument("--device", default=None)
    ap.add_argument("--smoke", action="store_true", help="20-second budget and less data: checks the pipeline")
    ap.add_argument("--smoke-cpu", action="store_true", help="CPU, stand-in model, tiny sizes: tests the logic without transformers")
    args = ap.parse_args()
    if args.minutes is None:
        args.minutes = 20 / 60 if (args.smoke or args.smoke_cpu) else 8.0
    if args.smoke or args.smoke_cpu:
        args.chat_docs = min(args.chat_docs, 5000)
        args.heldout_chat_docs = min(args.heldout_chat_docs, 200)
        args.sample_tokens = min(args.sample_tokens, 40)
        args.warmup = min(args.warmup, 20)
    if args.smoke_cpu:
        args.device = "cpu"
        args.layers, args.hidden, args.heads, args.head_dim, args.kv_heads, args.intermediate = 2, 64, 2, 32, 1, 128
        args.batch_size, args.seq_len = 8, 64
        args.eval_windows = min(args.eval_windows, 16)
        args.log_every = min(args.log_every, 5)
    return args


def main():
    args = parse_args()
    t_start = time.time()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        log(f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}")
    else:
        log(f"device: cpu, torch {torch.__version__}")
    amp = torch.bfloat16 if device.type == "cuda" else None
    os.makedirs(args.out, exist_ok=True)

    tok, tok_kind = load_tokenizer(args.tokenizer)
    log(f"tokenizer: {tok_kind}")
    data = Data(args, tok, device)
    data.log_n_unused = math.log(data.n_unused) if data.n_unused > 0 else None

    lm = TorchQwen3Model(args, device) if args.smoke_cpu else HFModel(args, device)
    emb = lm.embedding
    unused_mask = torch.ones(emb.shape[0], dtype=torch.bool, device=device)
    unused_mask[data.used_idx] = False
    with torch.no_grad():
        emb[unused_mask] = 0  # unused rows start (and stay) at zero
    n_emb = emb.numel()
    n_all = sum(p.numel() for p in lm.module.parameters())
    n_used_rows = len(data.used)
    log(f"parameters: {n_all:,} ({n_all - n_emb:,} outside the embedding; embedding {emb.shape[0]} x "
        f"{emb.shape[1]}, {n_used_rows} used rows = {n_used_rows * emb.shape[1]:,} trained parameters)")

    # AdamW: decay on matrices only (not embeddings, norms or biases).
    decay, no_decay = [], []
    for name, p in lm.module.named_parameters():
        (decay if p.ndim == 2 and p is not emb and "embed" not in name else no_decay).append(p)
    opt_kw = dict(lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    if device.type == "cuda" and "fused" in inspect.signature(torch.optim.AdamW).parameters:
        opt_kw["fused"] = True
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], **opt_kw)
    loss_fn = torch.compile(token_losses) if args.compile else token_losses

    # ---- training loop -------------------------------------------------
    rows = []  # loss.csv rows
    budget = args.minutes * 60
    total = args.steps or None
    eval_bs = max(1, min(16, args.batch_size // 4))
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)

    def evaluate(step, tokens, t):
        e0 = time.time()
        lp = eval_objective(lm, data, data.held_plain, amp, eval_bs)
        lc = eval_objective(lm, data, data.held_chat, amp, eval_bs)
        rows.append({"step": step, "tokens": tokens, "seconds": round(t, 2), "lr": "", "train_loss": "",
                     "heldout_loss": round(lp, 5), "heldout_chat_loss": round(lc, 5)})
        log(f"eval step {step}: held-out {lp:.4f}, held-out chat {lc:.4f} ({time.time() - e0:.2f}s)")
        return lp, time.time() - e0

    lm.module.train()
    t0 = time.time()
    first_loss, _ = evaluate(0, 0, 0.0)  # ~log(vocab) = 11.93 at initialisation
    e0 = time.time()  # the first evaluation paid for lazy initialisation: time a second one
    eval_objective(lm, data, data.held_plain, amp, eval_bs)
    eval_objective(lm, data, data.held_chat, amp, eval_bs)
    eval_cost = time.time() - e0
    best = (first_loss, 0, None)
    measure_from, t_measure = 3, None
    next_eval = None if total is None else [round(total * k / (args.evals + 1)) for k in range(1, args.evals + 1)]
    acc, acc_n, step, tokens, stop_reason = torch.zeros((), device=device), 0, 0, 0, "steps"
    while total is None or step < total:
        elapsed = time.time() - t0
        if elapsed >= budget:
            stop_reason = "time budget"
            break
        lr = lr_at(step, total, args)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = data.batch()
        loss = loss_fn(lm, x, y, data.used_idx, data.log_n_unused, amp).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(lm.module.parameters(), args.clip)
        opt.step()
        step += 1
        tokens += x.numel()
        acc += loss.detach()
        acc_n += 1

        # Estimate the step count once the speed is known.
        if total is None:
            if step == measure_from:
                sync()
                t_measure = time.time()
            elif step > measure_from and (step - measure_from >= 100 or time.time() - t0 >= 0.1 * budget):
                sync()
                now = time.time()
                per_step = (now - t_measure) / (step - measure_from)
                left = budget - (now - t0) - args.evals * eval_cost - 2.0
                total = step + max(1, int(0.98 * left / per_step))
                next_eval = [round(total * k / (args.evals + 1)) for k in range(1, args.evals + 1)]
                next_eval = [s for s in next_eval if s > step]
                log(f"speed: {per_step * 1000:.1f} ms/step, {x.numel() / per_step:,.0f} tokens/s -> {total} steps")
        if step % args.log_every == 0:
            tl = (acc / acc_n).item()
            acc.zero_()
            acc_n = 0
            rows.append({"step": step, "tokens": tokens, "seconds": round(time.time() - t0, 2), "lr": f"{lr:.6g}",
                         "train_loss": round(tl, 5), "heldout_loss": "", "heldout_chat_loss": ""})
            if step % (args.log_every * 20) == 0:
                log(f"step {step}{'/' + str(total) if total else ''}: loss {tl:.4f}, lr {lr:.2e}, "
                    f"{time.time() - t0:.0f}s")
            if not math.isfinite(tl):
                raise SystemExit("loss is not finite")
        if next_eval and step >= next_eval[0]:
            next_eval.pop(0)
            lp, _ = evaluate(step, tokens, time.time() - t0)
            if args.keep_best and lp < best[0]:
                best = (lp, step, {k: v.detach().clone() for k, v in lm.module.state_dict().items()})
    sync()
    train_seconds = time.time() - t0
    log(f"trained {step} steps, {tokens:,} tokens in {train_seconds:.1f}s (stopped by {stop_reason}); "
        f"{tokens / train_seconds:,.0f} tokens/s")
    final_plain, _ = evaluate(step, tokens, train_seconds)
    if args.keep_best and best[2] is not None and best[0] < final_plain:
        lm.module.load_state_dict(best[2])
        log(f"keeping the weights of step {best[1]} (held-out {best[0]:.4f} < final {final_plain:.4f})")

    # ---- unused rows, bf16 rounding, checks ----------------------------
    lm.module.eval()
    if device.type == "cuda":  # float32 from here on means float32
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    obj = eval_objective(lm, data, data.held_plain, amp, eval_bs)
    with torch.no_grad():
        drift = emb[unused_mask].abs().max().item() if bool(unused_mask.any()) else 0.0
        emb[unused_mask] = 0
    log(f"unused rows: {int(unused_mask.sum())} of {emb.shape[0]}, largest |value| before zeroing: {drift:g} "
        f"(0 expected: they never get a gradient)")
    full, mass, top_unused = eval_full(lm, data, data.held_plain, amp, eval_bs)
    with torch.no_grad():
        for p in lm.module.parameters():  # round to bf16, keep computing in float32
            p.copy_(p.to(torch.bfloat16).to(p.dtype))
    obj16 = eval_objective(lm, data, data.held_plain, None, eval_bs)
    full16, mass16, top16 = eval_full(lm, data, data.held_plain, None, eval_bs)
    chat16 = eval_objective(lm, data, data.held_chat, None, eval_bs)
    log("held-out loss (nats/token):")
    log(f"  training objective (used rows + constant for the zero rows), bf16 autocast: {obj:.5f}")
    log(f"  full-vocabulary forward after zeroing the unused rows, bf16 autocast:    {full:.5f}"
        f"  (difference {full - obj:+.2e})")
    log(f"  full-vocabulary forward, weights rounded to bf16, float32 compute:       {full16:.5f}"
        f"  (objective {obj16:.5f}; chat {chat16:.5f})")
    log(f"  softmax mass on the {data.n_unused} zero-row tokens: mean {mass16:.2e}; "
        f"argmax is a zero-row token at {100 * top16:.3f}% of positions")
    if abs(full - obj) > 1e-2:
        log("WARNING: the full-vocabulary loss differs from the training objective by more than 0.01")

    # ---- save ------------------------------------------------------------
    saved = lm.save(args.out, args.tokenizer, args.rope_theta)
    lm.check_saved(args.out, saved)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(args.tokenizer, name), os.path.join(args.out, name))
    sid = data.special_ids
    gen_cfg = {"bos_token_id": sid[EOT], "pad_token_id": sid[EOT], "eos_token_id": [sid[IM_END], sid[EOT]],
               "do_sample": True, "temperature": 0.6, "top_k": 20, "top_p": 0.95}
    if lm.kind == "qwen3":
        gen_cfg["transformers_version"] = lm.transformers_version
    with open(os.path.join(args.out, "generation_config.json"), "w") as f:
        json.dump(gen_cfg, f, indent=2)
        f.write("\n")

    fields = ["step", "tokens", "seconds", "lr", "train_loss", "heldout_loss", "heldout_chat_loss"]
    with open(os.path.join(args.out, "loss.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)

    # ---- samples -----------------------------------------------------------
    eos = [sid[IM_END], sid[EOT]]
    prompts = [
        ("plain", "In the beginning"),
        ("plain", "And Jesus said"),
        ("plain", "The LORD is my shepherd"),
        ("plain", "The Book of Ruth\n\nChapter 1\n\n"),
        ("chat (thinking on, template default)", render_chat([("Tell me about Moses.", None)], generation_prompt=True)),
        ("chat (enable_thinking=false)", render_chat([("Hello!", None)], generation_prompt=True) + "<think>\n\n</think>\n\n"),
        ("chat", render_chat([("What does the Bible say about love?", None)], generation_prompt=True)),
    ]
    with open(os.path.join(args.out, "samples.txt"), "w") as f:
        f.write(f"# {lm.kind} model, weights rounded to bf16, float32 compute; seed {args.seed}\n")
        f.write(f"# sampled: temperature 0.8, top_p 0.95; at most {args.sample_tokens} new tokens; "
                f"stops at <|im_end|> or <|endoftext|>\n\n")
        for i, (kind, text) in enumerate(prompts):
            ids = tok.encode(text, add_special_tokens=False).ids
            for greedy in (True, False):
                how = "greedy" if greedy else "sampled"
                try:
                    new = lm.generate(ids, args.sample_tokens, greedy, 0.8, 0.95, eos, sid[EOT], args.seed + i)
                except Exception as e:  # samples are for reading: never lose the run over them
                    f.write(f"=== {kind}, {how}: generation failed: {e!r}\n\n")
                    log(f"WARNING: sample generation failed: {e!r}")
                    continue
                end = "eos" if new and new[-1] in eos else "max tokens"
                f.write(f"=== {kind}, {how} ({len(new)} tokens, stopped by {end})\n")
                f.write(tok.decode(ids + new, skip_special_tokens=False) + "\n\n")
    with open(os.path.join(args.out, "samples.txt")) as f:
        log("samples:\n" + f.read())

    # ---- plot, summary ------------------------------------------------------
    try:
        how = plot_loss(rows, os.path.join(args.out, "loss.png"),
                        f"{lm.kind}: {args.layers}L h{args.hidden} on the KJV, {step} steps, {tokens / 1e6:.0f}M tokens")
        log(f"loss.png drawn with {how}")
    except Exception as e:  # matplotlib trouble: fall back to the built-in writer
        log(f"matplotlib failed ({e!r}); using the built-in PNG writer")
        sys.modules["matplotlib"] = None  # makes `import matplotlib` raise ImportError
        plot_loss(rows, os.path.join(args.out, "loss.png"), "loss")

    h, V = args.hidden, args.vocab_size
    n_norm = sum(p.numel() for p in lm.module.parameters() if p.ndim == 1)
    n_mat = n_all - n_emb - n_norm
    q8 = (n_mat + n_used_rows * h) * 34 / 32 + n_norm * 4
    summary = {
        "args": vars(args), "device": str(device), "torch": torch.__version__,
        "transformers": getattr(lm, "transformers_version", None), "tokenizer": tok_kind, "data": data.sizes,
        "parameters": {"total": n_all, "non_embedding": n_all - n_emb, "embedding_used_rows": n_used_rows,
                       "embedding_trained_parameters": n_used_rows * h},
        "training": {"steps": step, "tokens": tokens, "seconds": round(train_seconds, 1),
                     "tokens_per_second": round(tokens / train_seconds), "stopped_by": stop_reason,
                     "epochs_of_plain_text": round(tokens * (1 - args.chat_fraction) / data.sizes["plain_train_tokens"], 1)},
        "heldout_loss": {"initial": first_loss, "objective": obj, "full_vocab_zeroed": full, "bf16_float32": full16,
                         "objective_bf16": obj16, "chat_bf16": chat16, "zero_row_mass": mass16,
                         "zero_row_argmax_fraction": top16},
        "q8_0_gguf_estimate_bytes": {"nonzero_part": round(q8), "zero_rows_raw": round((V - n_used_rows) * h * 34 / 32),
                                     "note": "zero Q8_0 blocks (34 zero bytes each) compress to almost nothing in git"},
        "seconds_total": round(time.time() - t_start, 1),
    }
    with open(os.path.join(args.out, "train_summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    log(f"Q8_0 GGUF estimate: {q8 / 1e6:.2f} MB of non-zero data (+{(V - n_used_rows) * h * 34 / 32 / 1e6:.1f} MB "
        f"of zero blocks that compress away)")
    log(f"done in {time.time() - t_start:.0f}s: {args.out}")


if __name__ == "__main__":
    main()
