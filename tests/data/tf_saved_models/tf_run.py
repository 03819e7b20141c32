"""TF's side of the tensorweave -> TF tests (run with a Python that has TF).

``python tf_run.py saved_model EXPORT_DIR INPUTS_JSON`` loads the SavedModel with TF's
``loader.load`` (tag ``serve``) and prints, as JSON, every signature's outputs for the inputs
its input keys name. ``python tf_run.py meta META_FILE CKPT_PREFIX FETCHES_JSON`` runs TF's
``import_meta_graph`` and the returned saver's ``restore``, and prints the fetched tensors.
"""

import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def _plain(value):
    value = np.asarray(value)
    if value.dtype == object:
        return [v.decode() for v in value.reshape(-1)] if value.ndim else value.item().decode()
    return value.tolist()


def saved_model(export_dir: str, inputs_json: str) -> dict:
    inputs = json.loads(inputs_json)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        out = {}
        for name, sig in meta.signature_def.items():
            feeds = {info.name: inputs[key] for key, info in sig.inputs.items()}
            got = sess.run({key: info.name for key, info in sig.outputs.items()}, feeds)
            out[name] = {key: _plain(v) for key, v in got.items()}
        return out


def meta(meta_file: str, prefix: str, fetches_json: str) -> dict:
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(meta_file)
        saver.restore(sess, prefix)
        return {name: _plain(sess.run(name)) for name in json.loads(fetches_json)}


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    print(json.dumps({"saved_model": saved_model, "meta": meta}[mode](*args)))
