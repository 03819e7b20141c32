"""``tw.flags``: TF 1.x command-line flags (absl's, re-implemented)."""

from __future__ import annotations

import pytest

import tensorweave as tw
from tensorweave.platform import flags


@pytest.fixture
def fv() -> flags.FlagValues:
    values = flags.FlagValues()
    flags.DEFINE_string("name", "dflt", "a string", flag_values=values)
    flags.DEFINE_integer("steps", 10, "an int", lower_bound=0, flag_values=values)
    flags.DEFINE_float("lr", 0.5, "a float", flag_values=values)
    flags.DEFINE_boolean("fast", False, "a bool", flag_values=values)
    flags.DEFINE_enum("mode", "train", ["train", "eval"], "an enum", flag_values=values)
    flags.DEFINE_list("dirs", "a,b", "a list", flag_values=values)
    flags.DEFINE_multi_string("tag", None, "repeated", flag_values=values)
    return values


def test_parse_forms_and_remaining_args(fv: flags.FlagValues) -> None:
    rest = fv(["prog", "--name=x", "--steps", "3", "pos", "--lr=0.25", "--fast", "--mode=eval",
               "--dirs=c, d", "--tag=a", "--tag", "b", "--", "--steps=9"])
    assert rest == ["prog", "pos", "--steps=9"]
    assert (fv.name, fv.steps, fv.lr, fv.fast, fv.mode) == ("x", 3, 0.25, True, "eval")
    assert type(fv.steps) is int and type(fv.lr) is float
    assert fv.dirs == ["c", "d"] and fv.tag == ["a", "b"]


def test_defaults_negation_and_assignment(fv: flags.FlagValues) -> None:
    fv(["prog", "--nofast"])
    assert (fv.name, fv.steps, fv.fast, fv.dirs, fv.tag) == ("dflt", 10, False, ["a", "b"], None)
    fv(["prog", "--fast=false"])
    assert fv.fast is False
    fv.steps = 42
    assert fv.steps == 42 and fv["steps"].default == 10
    assert fv.flag_values_dict()["steps"] == 42 and "steps" in fv
    with pytest.raises(AttributeError):
        fv.nope = 1


def test_bad_values_and_unknown_flags(fv: flags.FlagValues) -> None:
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog", "--steps=abc"])
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog", "--steps=-1"])
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog", "--mode=test"])
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog", "--fast=maybe"])
    with pytest.raises(flags.UnrecognizedFlagError):
        fv(["prog", "--other=1"])
    assert fv(["prog", "--other=1", "--steps=2"], known_only=True) == ["prog", "--other=1"]
    with pytest.raises(flags.DuplicateFlagError):
        flags.DEFINE_string("name", "", "again", flag_values=fv)
    with pytest.raises(flags.IllegalFlagValueError):
        flags.DEFINE_integer("neg", -3, "", lower_bound=0, flag_values=fv)


def test_reading_before_parse_parses_sys_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    values = flags.FlagValues()
    flags.DEFINE_integer("batch", 4, "", flag_values=values)
    monkeypatch.setattr("sys.argv", ["prog", "--batch=7"])
    assert not values.is_parsed()
    assert values.batch == 7 and values.is_parsed()
    values.unparse_flags()
    assert not values.is_parsed() and values["batch"].value == 4


def test_exposed_as_tf_flags_and_app_flags() -> None:
    assert tw.flags is flags and tw.app.flags is flags
    assert tw.flags.FLAGS is tw.app.flags.FLAGS


def test_dunder_flags_is_absls_registry_of_flag_objects(fv: flags.FlagValues) -> None:
    # TF1 scripts list `FLAGS.__flags.items()`; under absl (TF >= 1.5) the values are Flag objects
    fv(["prog", "--steps=4"])
    registry = getattr(fv, "__flags")
    assert sorted(registry) == ["dirs", "fast", "lr", "mode", "name", "steps", "tag"]
    assert isinstance(registry["steps"], flags.Flag) and registry["steps"].value == 4
    with pytest.raises(AttributeError):
        fv._parse_flags()  # removed in TF 1.5, as here
