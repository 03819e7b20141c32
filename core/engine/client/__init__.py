"""The client: `Session`, its configuration protos and fetch mapping."""
