"""The ``tf.*`` namespace modules (``tf.nn``, ``tf.math``, ...), over `tensorweave.api`."""
