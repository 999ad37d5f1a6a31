"""The Jupyter side only: the kernel class over a Session, its launcher, the kernelspec, the Pygments lexer
and papermill's parameter translator."""
