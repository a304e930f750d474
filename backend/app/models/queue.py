"""The queue as an operator watches it: one reading of ocr_queue_metrics."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=0)]


class QueueSnapshot(BaseModel):
    """Chunks of the live queue at one moment, by the database's clock (completed ones are not
    counted: that would read every chunk ever finished)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pending: Count
    processing: Count
    failed: Count
    due: Count  # pending and claimable now (next_attempt_at has passed)
    # due for longer than the overdue threshold, plus retryable failures waiting that long for
    # the retry that sends them back to pending
    overdue: Count
    oldest_due_seconds: Annotated[float, Field(ge=0)]  # how long the oldest due chunk has been due
