"""Settings package: base.py holds everything; test.py adjusts it for the test suite."""
