"""Sample module for the Python outline."""
import os

MAX_SIZE = 100
logger = None


def top(a, b):
    def helper():
        return a
    return helper() + b


class Animal:
    """An animal."""

    sound = "..."

    def __init__(self, name):
        self.name = name

    @property
    def loud(self):
        return self.sound.upper()

    class Meta:
        def describe(self):
            return "meta"


@decorator
def decorated():
    pass


async def fetch(url):
    return url

if os.environ.get("X"):
    def conditional():
        pass
