"""soma-jupyterlab: the Soma JupyterLab extension, prebuilt.

The extension itself is shared data, installed to
`{prefix}/share/jupyter/labextensions/soma-jupyterlab/`, where JupyterLab finds
it with no build step; this module only names the version.
"""

__version__ = "0.1.0"
