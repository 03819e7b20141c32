"""``tf.examples.tutorials.mnist``: the MNIST reader of the TF1 tutorials (`input_data`)."""
