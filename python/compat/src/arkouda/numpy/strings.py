"""Arkouda's ``arkouda.numpy.strings``: the server-side string array, from ``arktos``."""

from arktos import Match, Strings, random_strings_lognormal, random_strings_uniform

__all__ = ["Match", "Strings", "random_strings_lognormal", "random_strings_uniform"]
