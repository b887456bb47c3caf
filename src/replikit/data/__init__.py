"""Data: the Scores and Predictions tables, file IO and built-in example datasets."""

from .io import read_frame, write_frame
from .tables import Predictions, Scores

__all__ = ["Scores", "Predictions", "read_frame", "write_frame"]
