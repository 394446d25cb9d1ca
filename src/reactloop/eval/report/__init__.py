"""What an eval shows: the tables, pages and charts made from the records.

Files, in reading order:

- ``counters``: means and number lists taken one number at a time
- ``summary``: records to the tables (per model × protocol, paired comparisons, per step), in
  any order
- ``health_table``: the protocol-health table of report.md and index.html
- ``markdown``: report.md's lines
- ``html``: index.html and each episode's viewer page
- ``svg``: SVG written by hand: shapes, escaped text, a plot's axes and round ticks
- ``charts``: the SVG charts (success and pass^k per rung, seconds and tokens per step)
- ``process``: pages and charts in a child process, started with the eval
- ``spool``: each episode's part of the files, put aside as its record arrives
- ``write``: ``StreamedReport``, records taken as they arrive, then every file of the report;
  ``write_report``, the same from records read in one pass (a results folder's)
"""
