"""Errors that name the kernel's source line.

Every API call records, and every error reports, the line of the user's code that made it: the
innermost stack frame outside this package (the kernel function, or a helper it calls).
"""

import os
import sys
import sysconfig

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"])


def _inside_package(filename):
    return os.path.dirname(os.path.abspath(filename)) == _PACKAGE_DIR


def _users(filename):
    """Code of the user's: neither this package nor the standard library (runpy, importlib)."""
    path = os.path.abspath(filename)
    return not _inside_package(filename) and not path.startswith(_STDLIB) and not filename.startswith("<frozen")


def user_frame():
    """The innermost frame of the user's code, or None."""
    frame = sys._getframe(1)
    while frame is not None and not _users(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def user_location():
    """(filename, line) of the user's code making the current call, or (None, None)."""
    frame = user_frame()
    if frame is None:
        return None, None
    return frame.f_code.co_filename, frame.f_lineno


class NkiError(Exception):
    """A kernel the tracer refuses: a call outside the subset, a bad shape or argument.

    The location is taken where the error is raised (the user's line making the call) unless given.
    """

    def __init__(self, message, location=None):
        super().__init__(message)
        self.message = message
        self.location = location if location is not None else user_location()

    def __str__(self):
        filename, line = self.location
        if filename is None:
            return f"nctlm.nki: {self.message}"
        return f"{filename}:{line}: {self.message}"


def location_of_traceback(tb):
    """The innermost traceback entry in the user's code (outside nctlm.nki and the standard
    library): where a user's exception surfaced."""
    found = (None, None)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _users(filename):
            found = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return found
