"""Arkouda's ``arkouda.core``: the client connection (``arkouda.core.client``)."""

from . import client

__all__ = ["client"]
