"""The Jupyter side only: the kernel class over a Session, its launcher, the kernelspec and the Pygments lexer."""
