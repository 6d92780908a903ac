"""Shapes for the lsp tests."""


class Square:
    """A square with a side."""

    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        """Return the area of the square."""
        return self.side * self.side


def total(squares: list[Square]) -> float:
    """Add the areas of squares."""
    return sum(s.area() for s in squares)
