"""Arkouda's ``arkouda.numpy.strings``: the server-side string array, from ``arktos``."""

from arktos import Strings, random_strings_uniform

__all__ = ["Strings", "random_strings_uniform"]
