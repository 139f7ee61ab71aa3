"""The autonomy policy: what ALMA may do on its own, what waits for a person, what is refused.

Pure: no I/O beyond reading ``system/autonomy.conf``. Importing this package is cheap on purpose
(``alma-ctl`` imports :mod:`policies.errors`), so nothing heavy is imported here.
"""
