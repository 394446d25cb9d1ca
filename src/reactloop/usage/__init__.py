"""Token and money accounting from a journal, a quadratic cost model, and a prefix-stability check.

Every step resends the whole history. With ``S`` tokens of system prompt and tools and ``d``
tokens added per step, ``n`` steps cost ``n*S + d*n*(n-1)/2`` input tokens: quadratic in ``n``.
``usage_report`` puts that prediction (``S`` and ``d`` estimated from the run's own first and
last step) beside what the provider measured, prices the run from a user's price table, and
warns when a step rewrote an earlier part of the prompt, which defeats providers' prefix caches;
a context compaction is such a change by design, and ``compaction_costs`` reports what each one
cost the cache. A call told to answer now may go out without the tool schemas (a smaller
prefix, ``S − T``): the model fits it as such. A journal of several runs (``reactloop chat``,
one run per turn) is one conversation: its ``runs`` have each turn's tokens and stop.
A journal whose run called sub-agents (``Agent.as_tool``) lists them in ``children``, each
with its tokens; ``tree_total`` is the whole tree's.
When a provider reports no usage at all, tokens are estimated from the journal's text
(about four characters a token) and the report says so.
"""

from reactloop.usage.compaction_cost import CompactionCost, compaction_costs
from reactloop.usage.costmodel import CostModel, fit_cost_model, predicted_input_tokens
from reactloop.usage.prefix import PrefixIssue, check_prefix
from reactloop.usage.prices import Price, PriceTable
from reactloop.usage.runs import RunUsage
from reactloop.usage.step_quality import StepQuality, step_quality
from reactloop.usage.steps import (
    StepUsage,
    estimated_step_usages,
    step_usages,
    usage_from,
)
from reactloop.usage.usage_report import UsageReport, usage_report

__all__ = [
    "CompactionCost",
    "CostModel",
    "PrefixIssue",
    "Price",
    "PriceTable",
    "RunUsage",
    "StepQuality",
    "StepUsage",
    "UsageReport",
    "check_prefix",
    "compaction_costs",
    "estimated_step_usages",
    "fit_cost_model",
    "predicted_input_tokens",
    "step_quality",
    "step_usages",
    "usage_from",
    "usage_report",
]
