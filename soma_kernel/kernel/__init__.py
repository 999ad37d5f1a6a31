"""The Jupyter kernel: protocol layer, magics, display, widgets."""
