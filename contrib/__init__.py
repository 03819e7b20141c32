"""Optional integrations (trace export, Graphviz export, ...)."""
