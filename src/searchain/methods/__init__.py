"""Methods: each turns a question into a :class:`searchain.types.Trace`."""

from searchain.methods.base import Method
from searchain.methods.retrieve_read import RetrieveRead

__all__ = ["Method", "RetrieveRead"]
