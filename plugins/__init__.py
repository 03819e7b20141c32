"""tensorweave's built-in plugins, each registered through the ``tensorweave`` entry points."""
