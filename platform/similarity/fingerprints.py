"""MOSS-style fingerprints of Python code, on the standard library's tokenizer.

A program becomes a stream of normalised tokens (every name is ``N``, every number ``0``,
every string ``S``; comments, docstrings and blank lines are gone; keywords and operators
stay), the stream's k-grams are hashed, and winnowing keeps the smallest hash of every window
of ``w`` consecutive hashes (Schleimer, Wilkerson and Aiken, SIGMOD 2003). Any run of at
least ``w + k - 1`` equal tokens shared by two programs leaves at least one shared fingerprint,
whatever was renamed, reordered, commented or added around it.

Pure Python, no Django: the platform stores what :func:`fingerprint` returns and the bench
calls it directly.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import keyword
import re
import tokenize
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

# Tuned on bench/bench_similarity.py (bench/results/similarity.md).
K = 10  # tokens per k-gram: shorter ones match idioms every program shares
WINDOW = 6  # a shared run of K + WINDOW - 1 = 15 tokens is always caught
THRESHOLD = 0.4  # share of the smaller program's fingerprints from which a pair is reported
# A program with fewer fingerprints of its own (beyond the starter's) is too short to judge:
# two students who each wrote three lines would score 100 %.
MIN_PRINTS = 8

_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.TYPE_COMMENT}
# Code the tokenizer refuses (a syntax error is still a submission): a rough split instead.
_ROUGH = re.compile(r"\#[^\n]*|[A-Za-z_]\w*|\d[\w.]*|'[^'\n]*'|\"[^\"\n]*\"|\S")


class Token(NamedTuple):
    text: str  # normalised
    line: int


class Print(NamedTuple):
    """One kept fingerprint: the k-gram's hash and the lines it spans."""

    hash: int
    first_line: int
    last_line: int


def _rough_tokens(code: str) -> list[Token]:
    tokens = []
    for number, line in enumerate(code.splitlines(), start=1):
        for match in _ROUGH.finditer(line):
            text = match.group()
            if text.startswith("#"):
                continue
            if text[0].isalpha() or text[0] == "_":
                text = text if keyword.iskeyword(text) else "N"
            elif text[0].isdigit():
                text = "0"
            elif text[0] in "'\"":
                text = "S"
            tokens.append(Token(text, number))
    return tokens


def tokens(code: str) -> list[Token]:
    """The normalised token stream of ``code``."""
    out: list[Token] = []
    stream: list[tokenize.TokenInfo] = []
    rest: list[Token] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            stream.append(token)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # Up to the last whole line the tokenizer read, its tokens; a rough split after it.
        last = stream[-1].start[0] if stream else 0
        stream = [t for t in stream if t.start[0] < last]
        skipped = "\n" * (last - 1)
        rest = _rough_tokens(skipped + "\n".join(code.splitlines()[last - 1 :])) if last else _rough_tokens(code)
    statement_start = True  # a string that is a whole statement is a docstring: a comment
    for index, token in enumerate(stream):
        kind = token.type
        if kind in _SKIPPED:
            continue
        if kind in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            statement_start = True
            # Block structure matters (a statement moved out of a loop is other code), but
            # blank lines and indentation width do not.
            out.append(Token({tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}[kind], token.start[0]))
            continue
        if kind == tokenize.STRING and statement_start:
            following = next((t for t in stream[index + 1 :] if t.type not in _SKIPPED), None)
            if following is None or following.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                continue
        statement_start = False
        if kind == tokenize.NAME:
            text = token.string if keyword.iskeyword(token.string) else "N"
        elif kind == tokenize.NUMBER:
            text = "0"
        elif kind in (tokenize.STRING, getattr(tokenize, "FSTRING_START", -1)):
            text = "S"
        else:
            text = token.string
        out.append(Token(text, token.start[0]))
    # A docstring's NEWLINE is left behind with nothing before it: drop doubled separators.
    cleaned: list[Token] = []
    for normalised in out + rest:
        if normalised.text == ";" and (not cleaned or cleaned[-1].text in (";", "{", "}")):
            continue
        cleaned.append(normalised)
    return cleaned


def _hash(texts: Sequence[str]) -> int:
    # Stable across processes (Python's hash() is salted) and small enough for a JSON number.
    return int.from_bytes(hashlib.blake2b(" ".join(texts).encode(), digest_size=7).digest(), "big")


def winnow(hashes: Sequence[int], window: int = WINDOW) -> list[int]:
    """Indexes of the hashes winnowing keeps: the rightmost minimum of every window, once."""
    if not hashes:
        return []
    if len(hashes) <= window:
        return [min(range(len(hashes)), key=lambda i: (hashes[i], -i))]
    kept: list[int] = []
    for start in range(len(hashes) - window + 1):
        lowest = min(range(start, start + window), key=lambda i: (hashes[i], -i))
        if not kept or kept[-1] != lowest:
            kept.append(lowest)
    return kept


def fingerprint(code: str, *, k: int = K, window: int = WINDOW, ignore: Iterable[int] = ()) -> list[Print]:
    """The winnowed fingerprints of ``code``; hashes in ``ignore`` (the starter's) are left out."""
    stream = tokens(code)
    if len(stream) < k:
        return []
    texts = [t.text for t in stream]
    hashes = [_hash(texts[i : i + k]) for i in range(len(texts) - k + 1)]
    skip = set(ignore)
    return [
        Print(hashes[i], stream[i].line, stream[i + k - 1].line)
        for i in winnow(hashes, window)
        if hashes[i] not in skip
    ]


@dataclass(frozen=True)
class Match:
    """How much of two programs' fingerprints they share."""

    shared: int
    score: float  # shared / the smaller program's count: a copy with dead code added still scores 1


def score(a: set[int], b: set[int]) -> Match:
    shared = len(a & b)
    smaller = min(len(a), len(b))
    return Match(shared, shared / smaller if smaller else 0.0)


def matched_lines(prints: Iterable[Print], shared: set[int]) -> set[int]:
    """Line numbers of ``prints`` covered by a fingerprint in ``shared``: the matched regions."""
    lines: set[int] = set()
    for p in prints:
        if p.hash in shared:
            lines.update(range(p.first_line, p.last_line + 1))
    return lines


@dataclass(frozen=True)
class Pair:
    a: int
    b: int
    shared: int
    score: float


def pairs(docs: dict[int, set[int]], *, threshold: float = THRESHOLD, common_share: float = 0.1) -> list[Pair]:
    """Every pair of ``docs`` (key -> fingerprint hashes) scoring at least ``threshold``, best
    first. Counting through an inverted index touches only pairs that share something. A hash
    that more than ``common_share`` of the programs (and more than ten) hold is an idiom of the
    task, not a copy (MOSS's -m, 10 by default), and is not counted; it would also cost a count
    for every pair of its holders."""
    # Counted in C (Counter, set intersections): a 500-student class holds ~50 000 fingerprints.
    frequency = Counter(itertools.chain.from_iterable(docs.values()))
    limit = max(10, int(common_share * len(docs)))
    common = {h for h, n in frequency.items() if n > limit}
    repeated = {h for h, n in frequency.items() if 2 <= n <= limit}
    index: dict[int, list[int]] = {}
    for key in sorted(docs):
        for h in docs[key] & repeated:
            index.setdefault(h, []).append(key)
    counts: Counter[tuple[int, int]] = Counter()
    for holders in index.values():
        counts.update(itertools.combinations(holders, 2))  # holders are in key order
    sizes = {key: len(hashes) - len(hashes & common) for key, hashes in docs.items()}
    found = []
    for (a, b), shared in counts.items():
        smaller = min(sizes[a], sizes[b])
        if smaller < MIN_PRINTS:
            continue
        value = shared / smaller
        if value >= threshold:
            found.append(Pair(a, b, shared, value))
    found.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return found


def clusters(found: Iterable[Pair]) -> list[list[int]]:
    """Groups of keys linked by the pairs (connected components), largest first."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in found:
        parent[root(p.a)] = root(p.b)
    groups: dict[int, list[int]] = {}
    for key in parent:
        groups.setdefault(root(key), []).append(key)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g))
