"""``tf.examples.tutorials``: data helpers for the TF1 tutorials."""
