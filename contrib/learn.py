"""``tf.contrib.learn`` (TF 1.15): the pure-Python text and category preprocessing that TF1
scripts still import, as ``tf.contrib.learn.preprocessing`` (built on first access).

Contract, as TF 1.15's ``learn/preprocessing``:

- `tokenizer` splits each document with `TOKENIZER_RE` (runs of capitals, a capitalised word
  before another capital, or runs of word characters, ``'`` and ``-``).
- `CategoricalVocabulary` maps categories to ids: ``<UNK>`` is 0, new categories take the next
  id in first-seen order until `freeze`; frozen, unknown categories map to 0. `trim` keeps the
  categories seen *more* than ``min_frequency`` times and renumbers them by descending count,
  ties in ascending (string) order.
- `VocabularyProcessor` tokenizes, fits a vocabulary (trimmed only when ``min_frequency > 0``)
  and maps each document to an ``int64`` row of ``max_document_length`` ids, truncated or padded
  with 0; `transform`/`fit_transform`/`reverse` are generators, as in TF.
- `ByteProcessor` maps documents to their UTF-8 bytes as ``uint8`` rows; `CategoricalProcessor`
  maps rows of categories to ids with one vocabulary per column (or one shared), NaN as 0.

Difference from TF: `VocabularyProcessor.save` writes JSON, not a pickle, so a saved file can be
read without running code. The vocabulary's categories must therefore be JSON values (str, int,
float, bool). A custom ``tokenizer_fn`` is not stored: `restore` takes it again as an argument,
and restoring a file saved with one raises `ValueError` if it is not given.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from tensorweave.platform import gfile

__all__ = ["ByteProcessor", "CategoricalProcessor", "CategoricalVocabulary", "TOKENIZER_RE",
           "VocabularyProcessor", "tokenizer"]

TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|['\w\-]+", re.UNICODE)

_FORMAT = "tensorweave.contrib.learn.VocabularyProcessor"
_FORMAT_VERSION = 1

Tokenizer = Callable[[Iterable[str]], Iterable[list[str]]]


def tokenizer(iterator: Iterable[str]) -> Iterator[list[str]]:
    """Yields the tokens of each document in `iterator`, split by `TOKENIZER_RE`."""
    for value in iterator:
        yield TOKENIZER_RE.findall(value)


class CategoricalVocabulary:
    """A growing map from categories to ids, with ``unknown_token`` as id 0."""

    def __init__(self, unknown_token: str = "<UNK>", support_reverse: bool = True) -> None:
        self._unknown_token = unknown_token
        self._mapping: dict[Hashable, int] = {unknown_token: 0}
        self._support_reverse = support_reverse
        self._reverse_mapping: list[Hashable] = [unknown_token]
        self._freq: dict[Hashable, int] = {}
        self._freeze = False

    def __len__(self) -> int:
        """The number of ids, the unknown token included."""
        return len(self._mapping)

    def freeze(self, freeze: bool = True) -> None:
        """Stops (or, with ``False``, resumes) giving new categories ids."""
        self._freeze = freeze

    def get(self, category: Hashable) -> int:
        """The id of `category`, given the next free id if it is new and the vocabulary is not
        frozen, else 0."""
        if category not in self._mapping:
            if self._freeze:
                return 0
            self._mapping[category] = len(self._mapping)
            self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category: Hashable, count: int = 1) -> None:
        """Counts `count` more occurrences of `category` (nothing for the unknown token, or for
        an unseen category once frozen)."""
        if self.get(category) <= 0:
            return
        self._freq[category] = self._freq.get(category, 0) + count

    def trim(self, min_frequency: int, max_frequency: int = -1) -> None:
        """Keeps the categories counted more than `min_frequency` times (and, when
        `max_frequency` > 0, fewer than it), renumbered 1..n by descending count, ties in
        ascending order with non-strings first."""
        by_name = sorted(self._freq.items(), key=lambda kv: (isinstance(kv[0], str), kv[0]))
        ranked = sorted(by_name, key=lambda kv: kv[1], reverse=True)
        self._mapping = {self._unknown_token: 0}
        self._reverse_mapping = [self._unknown_token]
        kept: dict[Hashable, int] = {}
        for category, count in ranked:
            if max_frequency > 0 and count >= max_frequency:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = len(self._mapping)
            self._reverse_mapping.append(category)
            kept[category] = count
        self._freq = kept

    def reverse(self, class_id: int) -> Hashable:
        """The category with id `class_id`."""
        if not self._support_reverse:
            raise ValueError("This vocabulary wasn't initalized with support_reverse to support "
                             "reverse() function.")
        return self._reverse_mapping[class_id]

    def _to_json(self) -> dict[str, Any]:
        return {
            "unknown_token": self._unknown_token,
            "support_reverse": self._support_reverse,
            "frozen": self._freeze,
            "categories": self._reverse_mapping,
            "frequencies": [[category, count] for category, count in self._freq.items()],
        }

    @classmethod
    def _from_json(cls, data: dict[str, Any]) -> CategoricalVocabulary:
        vocab = cls(data["unknown_token"], data["support_reverse"])
        vocab._reverse_mapping = list(data["categories"])
        vocab._mapping = {category: i for i, category in enumerate(vocab._reverse_mapping)}
        vocab._freq = {category: count for category, count in data["frequencies"]}
        vocab._freeze = data["frozen"]
        return vocab


class ByteProcessor:
    """Maps documents to rows of their UTF-8 bytes, cut or zero-padded to
    ``max_document_length``."""

    def __init__(self, max_document_length: int) -> None:
        self.max_document_length = max_document_length

    def fit(self, x: Iterable[str | bytes]) -> None:
        """Nothing to learn."""

    def fit_transform(self, x: Iterable[str | bytes]) -> Iterator[np.ndarray]:
        """Same as `transform`."""
        return self.transform(x)

    def reverse(self, x: Iterable[np.ndarray]) -> Iterator[str]:
        """Yields each row's text, trailing zeros dropped ('' if it is not valid UTF-8)."""
        for data in x:
            document = np.trim_zeros(np.asarray(data).astype(np.uint8), trim="b").tobytes()
            try:
                yield document.decode("utf-8")
            except UnicodeDecodeError:
                yield ""

    def transform(self, x: Iterable[str | bytes]) -> Iterator[np.ndarray]:
        """Yields each document's bytes as a ``uint8`` row of ``max_document_length``."""
        for document in x:
            if isinstance(document, str):
                document = document.encode("utf-8")
            row = np.frombuffer(bytes(document[:self.max_document_length]), dtype=np.uint8)
            yield np.pad(row, (0, self.max_document_length - len(row)), "constant")


class VocabularyProcessor:
    """Maps documents to rows of word ids (see the module docstring)."""

    def __init__(self, max_document_length: int, min_frequency: int = 0,
                 vocabulary: CategoricalVocabulary | None = None,
                 tokenizer_fn: Tokenizer | None = None) -> None:
        self.max_document_length = max_document_length
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn if tokenizer_fn else tokenizer
        self._custom_tokenizer = tokenizer_fn is not None

    def fit(self, raw_documents: Iterable[str], unused_y: Any = None) -> VocabularyProcessor:
        """Learns the vocabulary of `raw_documents`, then freezes it."""
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents: Iterable[str],
                      unused_y: Any = None) -> Iterator[np.ndarray]:
        """`fit`, then `transform`; `raw_documents` is read twice, so pass a list."""
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents: Iterable[str]) -> Iterator[np.ndarray]:
        """Yields one ``int64`` row of ``max_document_length`` word ids per document."""
        for tokens in self._tokenizer(raw_documents):
            word_ids = np.zeros(self.max_document_length, np.int64)
            for idx, token in enumerate(tokens[:self.max_document_length]):
                word_ids[idx] = self.vocabulary_.get(token)
            yield word_ids

    def reverse(self, documents: Iterable[Iterable[int]]) -> Iterator[str]:
        """Yields each row of ids as its words joined by spaces (padding reads ``<UNK>``)."""
        for item in documents:
            yield " ".join(str(self.vocabulary_.reverse(class_id)) for class_id in item)

    def save(self, filename: str) -> None:
        """Writes this processor to `filename` as JSON (TF writes a pickle)."""
        data = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "max_document_length": self.max_document_length,
            "min_frequency": self.min_frequency,
            "custom_tokenizer": self._custom_tokenizer,
            "vocabulary": self.vocabulary_._to_json(),
        }
        try:
            text = json.dumps(data)
        except TypeError as exc:
            raise TypeError(f"VocabularyProcessor.save writes JSON; the vocabulary holds a "
                            f"category that JSON cannot store: {exc}") from exc
        with gfile.GFile(filename, "w") as f:
            f.write(text)

    @classmethod
    def restore(cls, filename: str,
                tokenizer_fn: Tokenizer | None = None) -> VocabularyProcessor:
        """Reads a processor written by `save`; `tokenizer_fn` must be given again if it was
        saved with a custom one."""
        with gfile.GFile(filename, "rb") as f:
            raw = f.read()
        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError as exc:  # (UnicodeDecodeError is one)
            raise ValueError(f"{filename} is not a VocabularyProcessor saved by tensorweave "
                             f"(JSON; TF's pickled files are not read)") from exc
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"{filename} is not a VocabularyProcessor saved by tensorweave")
        if data["version"] != _FORMAT_VERSION:
            raise ValueError(f"{filename}: unsupported VocabularyProcessor format version "
                             f"{data['version']}")
        if data["custom_tokenizer"] and tokenizer_fn is None:
            raise ValueError(f"{filename} was saved with a custom tokenizer_fn, which is not "
                             f"stored: pass it to restore(filename, tokenizer_fn=...)")
        return cls(data["max_document_length"], data["min_frequency"],
                   CategoricalVocabulary._from_json(data["vocabulary"]), tokenizer_fn)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


class CategoricalProcessor:
    """Maps rows of categories to rows of ids, one vocabulary per column unless ``share``."""

    def __init__(self, min_frequency: int = 0, share: bool = False,
                 vocabularies: list[CategoricalVocabulary] | None = None) -> None:
        self.min_frequency = min_frequency
        self.share = share
        self.vocabularies_ = vocabularies

    def freeze(self, freeze: bool = True) -> None:
        """Freezes (or unfreezes) every vocabulary."""
        for vocab in self.vocabularies_ or ():
            vocab.freeze(freeze)

    def fit(self, x: Iterable[Iterable[Any]], unused_y: Any = None) -> CategoricalProcessor:
        """Learns each column's categories (NaN is skipped), then freezes."""
        for row in x:
            row = list(row)
            if self.vocabularies_ is None:
                if self.share:
                    shared = CategoricalVocabulary()
                    self.vocabularies_ = [shared for _ in row]
                else:
                    self.vocabularies_ = [CategoricalVocabulary() for _ in row]
            for idx, value in enumerate(row):
                if not _is_nan(value):
                    self.vocabularies_[idx].add(value)
        if self.min_frequency > 0:
            for vocab in self.vocabularies_ or ():
                vocab.trim(self.min_frequency)
        self.freeze()
        return self

    def fit_transform(self, x: Iterable[Iterable[Any]],
                      unused_y: Any = None) -> Iterator[np.ndarray]:
        """`fit`, then `transform`."""
        self.fit(x)
        return self.transform(x)

    def transform(self, x: Iterable[Iterable[Any]]) -> Iterator[np.ndarray]:
        """Yields one ``int64`` row of ids per row of `x` (NaN and unknowns are 0)."""
        self.freeze()
        for row in x:
            yield np.array([0 if _is_nan(value) else self.vocabularies_[idx].get(value)
                            for idx, value in enumerate(row)], dtype=np.int64)


def _preprocessing_module() -> ModuleType:
    module = ModuleType(f"{__name__}.preprocessing", "tf.contrib.learn.preprocessing")
    for obj in (ByteProcessor, CategoricalProcessor, CategoricalVocabulary, VocabularyProcessor,
                tokenizer):
        setattr(module, obj.__name__, obj)
    module.TOKENIZER_RE = TOKENIZER_RE
    module.__all__ = ["ByteProcessor", "CategoricalProcessor", "CategoricalVocabulary",
                      "TOKENIZER_RE", "VocabularyProcessor", "tokenizer"]
    return module


def __getattr__(name: str) -> ModuleType:
    if name == "preprocessing":
        module = sys.modules.setdefault(f"{__name__}.preprocessing", _preprocessing_module())
        globals()["preprocessing"] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
