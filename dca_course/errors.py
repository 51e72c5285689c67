"""The library's one error for bad input a user can fix.

A malformed bAbI file, an unknown data spec, a damaged checkpoint, an empty CNN/DailyMail
folder: each raises a subclass of :class:`InputError` whose message is one line and starts
with ``FILE:LINE:`` (or ``FILE:``) where there is a file.  The command line prints that line
as ``dca-course: error: ...`` and exits with status 2; ``--debug`` shows the traceback too.
Errors of the library itself (a bug) are not InputErrors and always show their traceback.
"""
from __future__ import annotations


class InputError(ValueError):
    """Bad input: a file, a folder, a data spec or an option the user gave."""


class OptionError(InputError):
    """An option of the command line that cannot work here: a number out of its range, a device
    this machine does not have, a run folder that cannot be written."""
