"""`lowtide logs report`: one picture of a run as a single HTML file that opens with no network
(reward and KL curves, reward histograms over steps, response-length drift, the reward-hacking
suspects with examples, the lowest- and highest-reward samples)."""

from lowtide.report.page import render
from lowtide.report.run_data import NothingYet, ReportData, ReportError, collect

__all__ = ["NothingYet", "ReportData", "ReportError", "collect", "render"]
