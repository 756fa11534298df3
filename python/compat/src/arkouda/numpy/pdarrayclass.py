"""Arkouda's ``arkouda.numpy.pdarrayclass``: the pdarray class."""

from arktos import pdarray

__all__ = ["pdarray"]
