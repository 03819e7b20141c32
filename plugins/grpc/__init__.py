"""The ``grpc``plugin."""
