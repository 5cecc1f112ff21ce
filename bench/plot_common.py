"""plot_common.py - what both plot scripts need: matplotlib's pyplot, or a skip where it is missing."""
import sys


def pyplot():
    """pyplot on the Agg backend; without matplotlib, print SKIPPED (CTest reports it so) and exit 0."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIPPED: matplotlib is not installed for this python3 (Debian: python3-matplotlib)")
        sys.exit(0)
    return plt
