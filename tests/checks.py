"""The tally the Python test drivers share: check(name, cond, detail)
counts a pass or prints the failure; summary(prefix) prints
'PREFIX: N passed, M failed' and gives the exit status."""
import sys


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, name, cond, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}", file=sys.stderr)

    def summary(self, prefix):
        print(f"{prefix}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
