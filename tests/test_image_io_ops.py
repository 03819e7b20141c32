"""``tw.read_file``/``write_file`` and the image codec ops (``tensorweave.api.image_io_ops``,
their OpDefs and host kernels): static shapes, decoded values against the images the test
files were built from, TF's errors, and a ``list_files -> read_file -> decode_png -> resize``
input pipeline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats.png import encode as encode_png
from tests.datasets import elements, fresh_graph  # noqa: F401 - the fixture
from tests.image_files import bmp, gif, gif_frame, png

RNG = np.random.RandomState(11)
RGB = RNG.randint(0, 256, (4, 5, 3)).astype(np.uint8)
TABLE = RNG.randint(0, 256, (4, 3)).astype(np.uint8)
FRAMES = [RNG.randint(0, 4, (3, 2)) for _ in range(3)]
ANIMATION = gif(2, 3, [gif_frame(f) for f in FRAMES], TABLE)
STILL = gif(2, 3, [gif_frame(FRAMES[0])], TABLE)
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"


def run(fetch):
    with tw.Session() as s:
        return s.run(fetch)


# -- files --------------------------------------------------------------------------------------


def test_write_then_read_a_file_creating_directories(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "data.bin"
    payload = bytes(range(256)) * 3
    write = tw.write_file(str(target), payload)
    assert isinstance(write, tw.Operation) and write.type == "WriteFile"
    run(write)
    assert target.read_bytes() == payload
    contents = tw.io.read_file(str(target))
    assert contents.dtype == tw.string and contents.shape.as_list() == []
    assert run(contents) == payload


def test_reading_a_missing_file_is_not_found_naming_it(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.png")
    with pytest.raises(errors.NotFoundError, match="nope.png"):
        run(tw.read_file(missing))


def test_file_names_must_be_scalars() -> None:
    with pytest.raises(ValueError, match="rank 0"):
        tw.read_file(["a", "b"])
    with pytest.raises(ValueError, match="rank 0"):
        tw.write_file("a", ["x", "y"])


# -- PNG ----------------------------------------------------------------------------------------


def test_decode_png_shapes_and_values() -> None:
    data = encode_png(RGB)
    native, grey = tw.image.decode_png(data), tw.io.decode_png(data, channels=1)
    assert native.dtype == tw.uint8 and native.shape.as_list() == [None, None, None]
    assert grey.shape.as_list() == [None, None, 1]
    got, got_grey = run([native, grey])
    np.testing.assert_array_equal(got, RGB)
    weights = np.array([9797, 19234, 3737])
    np.testing.assert_array_equal(got_grey[..., 0], (RGB.astype(np.int64) @ weights) >> 15)


def test_decode_png_of_an_interlaced_palette_file() -> None:
    indices = RNG.randint(0, 16, (9, 7, 1)).astype(np.uint8)
    palette = RNG.randint(0, 256, (16, 3)).astype(np.uint8)
    data = png(indices, 3, 4, filters=(1, 4, 3), interlace=True, palette=palette,
               trns=bytes(range(0, 160, 10)))
    out = run(tw.image.decode_png(data, channels=4))
    np.testing.assert_array_equal(out[..., :3], palette[indices[..., 0]])
    np.testing.assert_array_equal(out[..., 3], indices[..., 0] * 10)


def test_encode_png_round_trips_every_channel_count() -> None:
    images = [RNG.randint(0, 256, (3, 4, c)).astype(np.uint8) for c in (1, 2, 3, 4)]
    encoded = [tw.image.encode_png(im, compression=c) for im, c in zip(images, (-1, 0, 5, 9))]
    assert encoded[0].dtype == tw.string and encoded[0].shape.as_list() == []
    decoded = run([tw.image.decode_png(e) for e in encoded])
    for image, out in zip(images, decoded):
        np.testing.assert_array_equal(out, image)


def test_encode_png_checks() -> None:
    with pytest.raises(ValueError, match="rank 3"):
        tw.image.encode_png(np.zeros((2, 2), np.uint8))
    with pytest.raises(TypeError, match="float32"):
        tw.image.encode_png(np.zeros((2, 2, 3), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="1, 2, 3, or 4 channels, got 5"):
        run(tw.image.encode_png(np.zeros((2, 2, 5), np.uint8)))
    with pytest.raises(errors.InvalidArgumentError, match=r"compression should be in \[-1,9\]"):
        run(tw.image.encode_png(np.zeros((2, 2, 3), np.uint8), compression=10))


@pytest.mark.parametrize(("data", "error", "text"), [
    (b"", errors.InvalidArgumentError, "got empty file"),
    (b"BM\x00'x\x01", errors.InvalidArgumentError,
     r"unknown format starting with 'BM\\000\\'x\\001'"),
    (encode_png(RGB)[:30], errors.InvalidArgumentError, "Invalid PNG header, data size 30"),
    (encode_png(RGB)[:-20], errors.InvalidArgumentError, "Invalid PNG data, size"),
    (JPEG, errors.InvalidArgumentError, "Invalid JPEG data or crop window, data size 11"),
])
def test_decode_png_errors(data: bytes, error: type, text: str) -> None:
    with pytest.raises(error, match=text) as info:
        run(tw.image.decode_png(data, name="decoder"))
    assert "decoder" in str(info.value)


def test_decode_png_channel_attr_and_dtype() -> None:
    with pytest.raises(errors.InvalidArgumentError, match="channels must be 0, 1, 3, or 4"):
        run(tw.image.decode_png(encode_png(RGB), channels=2))
    with pytest.raises(TypeError, match="DataType uint32 not in list"):
        tw.image.decode_png(encode_png(RGB), dtype="uint32")


# -- GIF, BMP, JPEG -----------------------------------------------------------------------------


def test_decode_gif_all_frames_and_png_as_one_frame() -> None:
    frames = tw.image.decode_gif(ANIMATION)
    assert frames.shape.as_list() == [None, None, None, 3]
    out, png_frame = run([frames, tw.io.decode_gif(encode_png(RGB))])
    np.testing.assert_array_equal(out, np.stack([TABLE[f] for f in FRAMES]))
    np.testing.assert_array_equal(png_frame, RGB[None])


def test_decode_png_reads_a_still_gif_but_not_an_animation() -> None:
    np.testing.assert_array_equal(run(tw.image.decode_png(STILL)), TABLE[FRAMES[0]])
    with pytest.raises(errors.InvalidArgumentError, match="Got 3 frames, but animated gifs"):
        run(tw.image.decode_png(ANIMATION))
    with pytest.raises(errors.InvalidArgumentError, match="0 or 3 for GIF, got 1"):
        run(tw.image.decode_png(STILL, channels=1))
    with pytest.raises(errors.InvalidArgumentError, match=r"Invalid GIF data \(size"):
        run(tw.image.decode_gif(ANIMATION[:60]))  # cut inside the first image


def test_decode_bmp() -> None:
    image = RNG.randint(0, 256, (3, 5, 4)).astype(np.uint8)
    op = tw.image.decode_bmp(bmp(image, top_down=True), channels=4)
    assert op.shape.as_list() == [None, None, 4]
    np.testing.assert_array_equal(run(op), image)
    with pytest.raises(errors.InvalidArgumentError, match="does not match bits per pixel"):
        run(tw.image.decode_bmp(bmp(image), channels=3))


def test_jpeg_headers_alone_are_invalid_and_encoding_works() -> None:
    decode = tw.image.decode_jpeg(JPEG, channels=3, name="jpeg_in")
    assert decode.shape.as_list() == [None, None, 3]
    with pytest.raises(errors.InvalidArgumentError, match="jpeg_in"):
        run(decode)
    assert run(tw.image.encode_jpeg(RGB, quality=80)).startswith(b"\xff\xd8\xff")
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        run(tw.image.decode_image(JPEG))


def test_is_jpeg() -> None:
    checks = [tw.image.is_jpeg(JPEG), tw.io.is_jpeg(encode_png(RGB)), tw.image.is_jpeg(b"\xff")]
    assert checks[0].dtype == tw.bool and checks[0].shape.as_list() == []
    assert run(checks) == [True, False, False]


# -- decode_image -------------------------------------------------------------------------------


def test_decode_image_dispatches_on_magic_bytes() -> None:
    four = RNG.randint(0, 256, (2, 3, 4)).astype(np.uint8)
    images = [tw.image.decode_image(encode_png(RGB)), tw.image.decode_image(ANIMATION),
              tw.io.decode_image(bmp(four))]
    assert images[0].shape.ndims is None  # 3-D or 4-D, known only at run time
    got_png, got_gif, got_bmp = run(images)
    np.testing.assert_array_equal(got_png, RGB)
    assert got_gif.shape == (3, 3, 2, 3)
    np.testing.assert_array_equal(got_gif[2], TABLE[FRAMES[2]])
    np.testing.assert_array_equal(got_bmp, four)


def test_decode_image_without_animations_and_with_channels() -> None:
    first = tw.image.decode_image(ANIMATION, channels=3, expand_animations=False)
    assert first.shape.as_list() == [None, None, 3]
    grey = tw.image.decode_image(encode_png(RGB), channels=1, expand_animations=False)
    got_first, got_grey = run([first, grey])
    np.testing.assert_array_equal(got_first, TABLE[FRAMES[0]])
    assert got_grey.shape == (4, 5, 1)


def test_decode_image_float_and_other_dtypes() -> None:
    wide = np.array([[[0], [1], [65535]]], np.uint16)
    as_float = tw.image.decode_image(png(wide, 0, 16), dtype=tw.float32)
    as_int = tw.image.decode_image(encode_png(RGB), dtype=tw.int32)
    gif_float = tw.image.decode_image(STILL, dtype=tw.float64)
    assert as_float.dtype == tw.float32 and as_int.dtype == tw.int32
    got_float, got_int, got_gif = run([as_float, as_int, gif_float])
    assert got_float.dtype == np.float32
    np.testing.assert_array_equal(got_float[0, :, 0],
                                  np.array([0, 1, 65535], np.float32) * np.float32(1 / 65535))
    assert got_int.dtype == np.int32
    np.testing.assert_array_equal(got_int, RGB.astype(np.int32) << 23)  # TF: widened by shift
    np.testing.assert_allclose(got_gif[0], TABLE[FRAMES[0]] / 255.0)


def test_decode_image_errors() -> None:
    with pytest.raises(ValueError, match=r"channels must be in \(None, 0, 1, 3, 4\)"):
        tw.image.decode_image(b"", channels=2)
    with pytest.raises(errors.InvalidArgumentError,
                       match="Unable to decode bytes as JPEG, PNG, GIF, or BMP"):
        run(tw.image.decode_image(b"not an image"))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Channels must be in \(None, 0, 3\) when decoding GIF"):
        run(tw.image.decode_image(STILL, channels=4))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Channels must be in \(None, 0, 3\) when decoding BMP"):
        run(tw.image.decode_image(bmp(RGB), channels=1))


# -- an input pipeline --------------------------------------------------------------------------


def test_list_files_read_decode_resize_pipeline(tmp_path: Path) -> None:
    images = {f"img{i}.png": RNG.randint(0, 256, (6 + i, 4 + 2 * i, 3)).astype(np.uint8)
              for i in range(3)}
    for name, image in images.items():
        (tmp_path / name).write_bytes(encode_png(image))

    def load(path: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        image = tw.image.decode_png(tw.read_file(path), channels=3)
        return path, tw.image.resize_images(image, [4, 4],
                                            method=tw.image.ResizeMethod.NEAREST_NEIGHBOR)

    dataset = tw.data.Dataset.list_files(str(tmp_path / "*.png"), shuffle=False).map(load)
    got = elements(dataset)
    assert [Path(p.decode()).name for p, _ in got] == sorted(images)
    for (_, resized), image in zip(got, (images[n] for n in sorted(images))):
        assert resized.shape == (4, 4, 3) and resized.dtype == np.uint8
        rows = np.floor(np.arange(4) * image.shape[0] / 4).astype(int)
        cols = np.floor(np.arange(4) * image.shape[1] / 4).astype(int)
        np.testing.assert_array_equal(resized, image[rows][:, cols])


# -- uint16 -------------------------------------------------------------------------------------

DEEP = RNG.randint(0, 65536, (3, 4, 3)).astype(np.uint16)
DEEP[0, 0], DEEP[0, 1] = [65535, 0, 1], [256, 65534, 255]


def test_decode_png_uint16_is_exact_for_sixteen_bit_files() -> None:
    image = tw.image.decode_png(encode_png(DEEP), dtype=tw.uint16)
    assert image.dtype == tw.uint16
    out = run(image)
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, DEEP)
    narrow = run(tw.image.decode_png(encode_png(DEEP)))
    np.testing.assert_array_equal(narrow, (DEEP >> 8).astype(np.uint8))  # the high byte
    widened = run(tw.image.decode_png(encode_png(RGB), dtype=tw.uint16))
    np.testing.assert_array_equal(widened, RGB.astype(np.uint16) * 257)


def test_encode_png_uint16_round_trips_through_the_ops() -> None:
    encoded = tw.image.encode_png(tw.constant(DEEP[..., :2]))
    out = run(tw.image.decode_png(encoded, channels=0, dtype=tw.uint16))
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, DEEP[..., :2])
    with pytest.raises(TypeError, match="DataType uint32 not in list"):
        tw.image.encode_png(tw.constant(DEEP.astype(np.uint32)))


def test_decode_png_uint16_refuses_a_gif() -> None:
    with pytest.raises(errors.InvalidArgumentError, match="GIF images decode to uint8 only"):
        run(tw.image.decode_png(STILL, dtype=tw.uint16))


def test_decode_image_uint16_keeps_sixteen_bit_pngs_and_scales_the_rest() -> None:
    image = RNG.randint(0, 256, (3, 5, 3)).astype(np.uint8)
    png16, from_bmp = run([tw.image.decode_image(encode_png(DEEP), dtype=tw.uint16),
                           tw.image.decode_image(bmp(image), dtype=tw.uint16)])
    assert png16.dtype == np.uint16 and from_bmp.dtype == np.uint16
    np.testing.assert_array_equal(png16, DEEP)
    np.testing.assert_array_equal(from_bmp, image.astype(np.uint16) * 256)  # convert_image_dtype
