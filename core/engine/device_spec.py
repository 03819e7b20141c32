"""TensorFlow's device-name grammar.

Contract: `DeviceSpec.from_string` parses full, partial and shorthand names
(``/job:ps/task:0``, ``/cpu:1``, ``/device:GPU:0``, ``/job:w/replica:0/task:1/device:CPU:0``);
`merge`/`make_merged_spec` fill unset fields from another spec (TF's ``MergeFrom``); `to_string`
prints the canonical form. A malformed name raises `ValueError`.
"""

from __future__ import annotations

import re

import attrs

_PART = re.compile(r"^(job|replica|task|device):(.*)$", re.IGNORECASE)


@attrs.frozen
class DeviceSpec:
    """A possibly partial device name; unset fields are ``None``."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        if not spec:
            return cls()
        if isinstance(spec, DeviceSpec):
            return spec
        fields: dict[str, object] = {}
        for part in spec.split("/"):
            if not part:
                continue
            m = _PART.match(part)
            if m:
                key, value = m.group(1).lower(), m.group(2)
                if key == "device":
                    dev_type, _, index = value.partition(":")
                    fields["device_type"] = _device_type(dev_type, spec)
                    fields["device_index"] = _index(index, spec)
                elif key == "job":
                    if not re.fullmatch(r"[A-Za-z][\w-]*", value):
                        raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
                    fields["job"] = value
                else:
                    fields[key] = _index(value, spec)
                continue
            dev_type, sep, index = part.partition(":")
            if sep and dev_type.upper() in ("CPU", "GPU") or (not sep and dev_type == "*"):
                fields["device_type"] = _device_type(dev_type, spec)
                fields["device_index"] = _index(index, spec)
                continue
            raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
        return cls(**fields)

    def to_string(self) -> str:
        out = ""
        if self.job is not None:
            out += f"/job:{self.job}"
        if self.replica is not None:
            out += f"/replica:{self.replica}"
        if self.task is not None:
            out += f"/task:{self.task}"
        if self.device_type is not None:
            index = "*" if self.device_index is None else str(self.device_index)
            out += f"/device:{self.device_type}:{index}"
        return out

    def make_merged_spec(self, other: DeviceSpec) -> DeviceSpec:
        """Fields set in `other` override this spec's (TF's ``MergeFrom``)."""
        return DeviceSpec(**{
            f.name: getattr(other, f.name) if getattr(other, f.name) is not None
            else getattr(self, f.name)
            for f in attrs.fields(DeviceSpec)
        })

    def is_compatible_with(self, full: DeviceSpec) -> bool:
        """True if every field set here equals `full`'s."""
        return all(
            getattr(self, f.name) is None or getattr(self, f.name) == getattr(full, f.name)
            for f in attrs.fields(DeviceSpec)
        )

    @property
    def task_name(self) -> str:
        return f"/job:{self.job}/replica:{self.replica or 0}/task:{self.task or 0}"

    def __str__(self) -> str:
        return self.to_string()


def _device_type(value: str, spec: str) -> str | None:
    if value in ("*", ""):
        return None
    if not re.fullmatch(r"[A-Za-z_]+", value):
        raise ValueError(f"Unknown device type '{value}' in '{spec}'")
    return value.upper() if value.upper() in ("CPU", "GPU") else value


def _index(value: str, spec: str) -> int | None:
    if value in ("*", ""):
        return None
    if not value.isdigit():
        raise ValueError(f"Invalid index '{value}' in device spec '{spec}'")
    return int(value)


def canonical(spec: str | DeviceSpec) -> str:
    """The canonical string of a spec (``/job:a/replica:0/task:0/device:CPU:0`` when full)."""
    return DeviceSpec.from_string(spec).to_string() if isinstance(spec, str) else spec.to_string()


def merge_device(outer: str, inner: str) -> str:
    """Soft-merge a nested `device` scope: inner fields win, unset ones come from outer."""
    return DeviceSpec.from_string(outer).make_merged_spec(DeviceSpec.from_string(inner)).to_string()
