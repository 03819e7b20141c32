"""Protocol-buffer coding of the engine's messages (wire format, message schemas, text format)."""
