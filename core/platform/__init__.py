"""TF1's platform modules: ``tf.app``, ``tf.flags``, ``tf.logging``, ``tf.gfile``, ``tf.test``."""
