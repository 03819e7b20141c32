"""``tf.examples``: the tutorial helpers TF1 scripts import (``tutorials.mnist.input_data``)."""
