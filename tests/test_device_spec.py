"""DeviceSpec: TF's device-name grammar."""

import pytest

from tensorweave.engine.device_spec import DeviceSpec, merge_device


@pytest.mark.parametrize("text, fields", [
    ("/job:ps/task:0", dict(job="ps", task=0)),
    ("/cpu:1", dict(device_type="CPU", device_index=1)),
    ("/device:GPU:0", dict(device_type="GPU", device_index=0)),
    ("/gpu:*", dict(device_type="GPU")),
    ("/job:worker/replica:0/task:1/device:CPU:0",
     dict(job="worker", replica=0, task=1, device_type="CPU", device_index=0)),
    ("", {}),
])
def test_parse(text, fields):
    assert DeviceSpec.from_string(text) == DeviceSpec(**fields)


@pytest.mark.parametrize("bad", ["/job:ps/bogus:1", "/task:x", "/cpu:a", "nonsense"])
def test_malformed_names_are_value_errors(bad):
    with pytest.raises(ValueError):
        DeviceSpec.from_string(bad)


def test_canonical_string_and_merge():
    assert DeviceSpec.from_string("/cpu:0").to_string() == "/device:CPU:0"
    assert merge_device("/job:ps/task:1", "/cpu:0") == "/job:ps/task:1/device:CPU:0"
    assert merge_device("/job:ps/task:1/device:GPU:0", "/job:worker") == \
        "/job:worker/task:1/device:GPU:0"
    full = DeviceSpec.from_string("/job:w/replica:0/task:2/device:CPU:0")
    assert DeviceSpec.from_string("/job:w/task:2").is_compatible_with(full)
    assert not DeviceSpec.from_string("/job:w/task:1").is_compatible_with(full)
