"""A question parsed once: its tokens, their counts and stems, its intents and, for a long
question, its evidence — the value every ranking stage reads instead of tokenizing again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ctxframe._rank.evidence import Evidence, EvidenceWeights, extract
from ctxframe._rank.tokens import QUERY_STOPWORDS, tokenize

__all__ = ["Question", "stem", "stems"]

TEST_WORDS = frozenset({"test", "tests", "testing"})
IMPORT_WORDS = frozenset({"import", "imports", "module", "modules"})
DOC_WORDS = frozenset({"doc", "docs", "documentation", "adr", "spec", "readme"})
# "what calls X", "who raises X", "where is X read": the answer refers to X, it is not X.
CALLER_WORDS = frozenset(
    {
        "call", "calls", "called", "caller", "callers", "calling",
        "invoke", "invokes", "invoked",
        "use", "uses", "used", "user", "users",
        "read", "reads", "reader", "readers",
        "raise", "raises", "raised",
        "instantiate", "instantiates", "instantiated",
        "apply", "applies", "applied",
        "consume", "consumes", "consumed",
        "reference", "references", "referenced",
        "picked", "looked",
    }
)  # fmt: skip
CALLER_LEADS = frozenset({"what", "who", "which", "where"})


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball English

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """The Snowball English stem of one token (``redirecting`` -> ``redirect``)."""
    return _stemmer().stemWord(token)


def stems(tokens: Iterable[str]) -> list[str]:
    """Stems of many tokens at once (one call into the C stemmer)."""
    return _stemmer().stemWords(list(tokens))


@dataclass(frozen=True)
class Question:
    """One question, tokenized once (see ctxframe._rank.tokens for the tokenizer).

    ``tokens``: query tokens, question grammar dropped (kept if nothing else remains);
    ``all_tokens``: every token (what standard BM25 reads); ``counts``: per query token, its
    count; ``words``: every token as a set (intent words are grammar too)."""

    text: str
    tokens: tuple[str, ...]
    all_tokens: tuple[str, ...]
    weights: EvidenceWeights = field(default_factory=EvidenceWeights)

    @classmethod
    def parse(cls, text: str | None, weights: EvidenceWeights | None = None) -> Question:
        """Tokenize ``text`` (a question, an identifier, a bug report)."""
        text = text or ""
        toks = tokenize(text)
        kept = [t for t in toks if t not in QUERY_STOPWORDS]
        return cls(text, tuple(kept or toks), tuple(toks), weights or EvidenceWeights())

    @cached_property
    def counts(self) -> dict[str, int]:
        """Per distinct query token, how often the question says it."""
        return dict(Counter(self.tokens))

    @cached_property
    def words(self) -> frozenset[str]:
        """Every token of the question, stopwords included."""
        return frozenset(self.all_tokens)

    @cached_property
    def stems(self) -> dict[str, str]:
        """Per distinct query token, its stem."""
        keys = sorted(self.counts)
        return dict(zip(keys, stems(keys), strict=True))

    @cached_property
    def long(self) -> bool:
        """A paragraph (``long_tokens`` distinct query tokens or more) or several lines."""
        return "\n" in self.text.strip() or len(self.counts) >= self.weights.long_tokens

    @cached_property
    def evidence(self) -> Evidence:
        """Paths, names, identifiers and token weights the text holds (ctxframe._rank.evidence)."""
        return extract(self.text, self.weights, counts=self.counts)

    @cached_property
    def intent_words(self) -> frozenset[str]:
        """The words that made an intent in a short question: they say what kind of node is
        wanted (a test, a module, a caller), not what its text holds, so content evidence skips
        them (a bug report's "test" and "import" are part of its text)."""
        w, out = self.words, set()
        groups = {"test": TEST_WORDS, "import": IMPORT_WORDS, "doc": DOC_WORDS}
        for intent, words in groups.items():
            if intent in self.intents:
                out |= w & words
        if "callers" in self.intents:
            out |= w & CALLER_WORDS
        return frozenset(out)

    @cached_property
    def intents(self) -> frozenset[str]:
        """What a short question asks for: ``test``, ``import``, ``doc`` (those nodes are then
        not discounted) and ``callers`` (who calls, uses, reads, raises a thing it names). A
        long text (a bug report) has none: its "test" and "import" are part of its story."""
        if self.long:
            return frozenset()
        w = self.words
        out = set()
        if w & TEST_WORDS:
            out.add("test")
        if w & IMPORT_WORDS:
            out.add("import")
        if w & DOC_WORDS:
            out.add("doc")
        if w & CALLER_WORDS and w & CALLER_LEADS and self.evidence.identifiers:
            out.add("callers")
        return frozenset(out)
