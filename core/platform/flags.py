"""``tw.flags`` / ``tw.app.flags``: command-line flags in the shape of ``tf.compat.v1.flags``
(absl's flags as TensorFlow 1.x re-exports them), without depending on absl.

Contract: ``DEFINE_<kind>(name, default, help)`` registers a flag on the global `FLAGS`;
defining a name twice raises `DuplicateFlagError`. ``FLAGS(argv, known_only=False)`` parses
``--name=value``, ``--name value``, ``--flag``/``--noflag`` (booleans) and stops at ``--``;
it returns ``argv[0]`` followed by the arguments that are not flags (and, with
``known_only``, the unknown flags, which otherwise raise `UnrecognizedFlagError`). A value
that does not parse raises `IllegalFlagValueError`. Reading a flag before any parse parses
``sys.argv`` first, as TF 1.x's wrapper does, so scripts may read ``FLAGS.x`` at import time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

__all__ = ["DEFINE_bool", "DEFINE_boolean", "DEFINE_enum", "DEFINE_float", "DEFINE_integer",
           "DEFINE_list", "DEFINE_multi_integer", "DEFINE_multi_string", "DEFINE_string",
           "DuplicateFlagError", "Error", "FLAGS", "Flag", "FlagValues",
           "IllegalFlagValueError", "UnrecognizedFlagError"]


class Error(Exception):
    """Base class of the flag errors."""


class DuplicateFlagError(Error):
    """A flag name defined twice."""


class IllegalFlagValueError(Error):
    """A value that the flag's parser refuses (bad number, enum value, bound)."""


class UnrecognizedFlagError(Error):
    """A ``--name`` on the command line that no DEFINE_* declared."""


_TRUE = frozenset({"true", "t", "1", "yes", "y"})
_FALSE = frozenset({"false", "f", "0", "no", "n"})


def _parse_bool(text: str) -> bool:
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"Non-boolean argument to boolean flag: {text!r}")


@attrs.define
class Flag:
    """One flag: its parser turns a command-line string into the value; ``multi`` flags
    collect every occurrence in a list."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any]
    boolean: bool = False
    multi: bool = False
    value: Any = None
    present: int = 0

    def reset(self) -> None:
        """Back to the default; a string default goes through the parser (as absl does)."""
        self.present = 0
        self.value = self.default
        if isinstance(self.default, str) and not self.multi:
            self.value = self._parse_checked(self.default)

    def _parse_checked(self, text: str) -> Any:
        try:
            return self.parse(text)
        except ValueError as e:
            raise IllegalFlagValueError(f"flag --{self.name}={text}: {e}") from None

    def set_from_text(self, text: str) -> None:
        parsed = self._parse_checked(text)
        if self.multi:
            self.value = (self.value if self.present else []) + [parsed]
        else:
            self.value = parsed
        self.present += 1


class FlagValues:
    """The registry of flags and their current values (``FLAGS.name`` reads one)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def define(self, flag: Flag) -> None:
        if flag.name in self._flags:
            raise DuplicateFlagError(f"The flag '{flag.name}' is defined twice.")
        flag.reset()
        self._flags[flag.name] = flag

    def __getattr__(self, name: str) -> Any:
        flags = self.__dict__["_flags"]
        if name == "__flags":  # absl keeps its registry there, and TF1 scripts list it
            return flags
        if name not in flags:
            raise AttributeError(name)
        if not self.__dict__["_parsed"]:
            self(sys.argv)
        return flags[name].value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._flags:
            raise AttributeError(name)
        self._flags[name].value = value

    def __getitem__(self, name: str) -> Flag:
        return self._flags[name]

    def __contains__(self, name: object) -> bool:
        return name in self._flags

    def __iter__(self) -> Iterator[str]:
        return iter(self._flags)

    def is_parsed(self) -> bool:
        return self._parsed

    def mark_as_parsed(self) -> None:
        object.__setattr__(self, "_parsed", True)

    def unparse_flags(self) -> None:
        for flag in self._flags.values():
            flag.reset()
        object.__setattr__(self, "_parsed", False)

    def flag_values_dict(self) -> dict[str, Any]:
        return {name: flag.value for name, flag in self._flags.items()}

    def __call__(self, argv: Sequence[str], known_only: bool = False) -> list[str]:
        if isinstance(argv, str):
            raise TypeError("argv should be a tuple/list of strings, not bytes or string.")
        if not argv:
            raise ValueError("argv cannot be an empty list, and must contain the program "
                             "name as the first element.")
        rest = [argv[0]]
        args = list(argv[1:])
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                rest.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, eq, text = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not eq:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.boolean:
                    negated.value, negated.present = False, negated.present + 1
                    continue
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise UnrecognizedFlagError(f"Unknown command line flag '{name}'")
            if not eq:
                if flag.boolean:
                    text = "true"
                elif i < len(args):
                    text, i = args[i], i + 1
                else:
                    raise IllegalFlagValueError(f"Flag --{name} must have a value other "
                                                "than None.")
            flag.set_from_text(text)
        self.mark_as_parsed()
        return rest


FLAGS = FlagValues()


def _bounded(kind: Callable[[str], Any], lower: Any, upper: Any) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        value = kind(text)
        if lower is not None and value < lower:
            raise ValueError(f"{value} is not >= {lower}")
        if upper is not None and value > upper:
            raise ValueError(f"{value} is not <= {upper}")
        return value
    return parse


def _define(name: str, default: Any, help: str, parse: Callable[[str], Any],
            flag_values: FlagValues, **kw: Any) -> Flag:
    flag = Flag(name=name, default=default, help=help, parse=parse, **kw)
    flag_values.define(flag)
    return flag


def _typed_default(parse: Callable[[str], Any], default: Any) -> Any:
    """A non-string default goes through the parser's checks as its string form would."""
    if default is None or isinstance(default, str):
        return default
    try:
        parse(str(default))
    except ValueError as e:
        raise IllegalFlagValueError(str(e)) from None
    return default


def DEFINE_string(name: str, default: str | None, help: str,  # noqa: N802 - TF's name
                  flag_values: FlagValues = FLAGS) -> Flag:
    """A string flag."""
    return _define(name, default, help, str, flag_values)


def DEFINE_integer(name: str, default: int | None, help: str,  # noqa: N802
                   lower_bound: int | None = None, upper_bound: int | None = None,
                   flag_values: FlagValues = FLAGS) -> Flag:
    """An int flag, optionally bounded (inclusive)."""
    parse = _bounded(int, lower_bound, upper_bound)
    return _define(name, _typed_default(parse, default), help, parse, flag_values)


def DEFINE_float(name: str, default: float | None, help: str,  # noqa: N802
                 lower_bound: float | None = None, upper_bound: float | None = None,
                 flag_values: FlagValues = FLAGS) -> Flag:
    """A float flag, optionally bounded (inclusive)."""
    parse = _bounded(float, lower_bound, upper_bound)
    return _define(name, _typed_default(parse, default), help, parse, flag_values)


def DEFINE_boolean(name: str, default: bool | None, help: str,  # noqa: N802
                   flag_values: FlagValues = FLAGS) -> Flag:
    """A boolean flag: ``--name``, ``--noname`` or ``--name=true|false|1|0``."""
    return _define(name, default, help, _parse_bool, flag_values, boolean=True)


DEFINE_bool = DEFINE_boolean


def DEFINE_enum(name: str, default: str | None, enum_values: Sequence[str],  # noqa: N802
                help: str, flag_values: FlagValues = FLAGS) -> Flag:
    """A string flag restricted to `enum_values`."""
    allowed = list(enum_values)
    if not allowed:
        raise ValueError(f"enum_values cannot be empty, found '{enum_values}'")

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"value should be one of <{'|'.join(allowed)}>")
        return text
    return _define(name, default, help, parse, flag_values)


def _split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def DEFINE_list(name: str, default: str | list[str] | None, help: str,  # noqa: N802
                flag_values: FlagValues = FLAGS) -> Flag:
    """A comma-separated list of strings."""
    return _define(name, default, help, _split_list, flag_values)


def DEFINE_multi_string(name: str, default: list[str] | str | None, help: str,  # noqa: N802
                        flag_values: FlagValues = FLAGS) -> Flag:
    """A string flag that may repeat; its value is the list of occurrences."""
    default = [default] if isinstance(default, str) else default
    return _define(name, default, help, str, flag_values, multi=True)


def DEFINE_multi_integer(name: str, default: list[int] | int | None, help: str,  # noqa: N802
                         flag_values: FlagValues = FLAGS) -> Flag:
    """An int flag that may repeat; its value is the list of occurrences."""
    default = [default] if isinstance(default, int) else default
    return _define(name, default, help, int, flag_values, multi=True)
