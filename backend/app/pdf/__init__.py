"""PDF handling: inspect, plan, split, repair."""

import logging

# We report damage ourselves, in one line; pypdf's own log lines (it is imported lazily, only for
# damaged files) would only repeat it.
logging.getLogger("pypdf").setLevel(logging.ERROR)
