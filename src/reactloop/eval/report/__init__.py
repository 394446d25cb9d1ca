"""What an eval shows: the tables, pages and charts made from the stored records.

Files, in reading order:

- ``summary``: records to the tables (per model × protocol, paired comparisons, per step)
- ``health_table``: the protocol-health table of report.md and index.html
- ``markdown``: report.md's lines
- ``html``: index.html and each episode's viewer page
- ``charts``: the PNG charts (the ``eval`` extra: matplotlib)
- ``process``: pages and charts in a child process, started with the eval
- ``write``: ``write_report``, every file of the report in one pass over the records
"""
