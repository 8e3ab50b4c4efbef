"""A module named like an installed package in the working directory: importing a
policy from here must not make it replace pandas (issue 26 item 13)."""
raise SystemExit("the working directory's pandas.py was imported")
