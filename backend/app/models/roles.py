"""What a member of a matter may do: ``matter_members.role``.

=========  ==========================================================  ======
role       may                                                         writes
=========  ==========================================================  ======
viewer     read documents, progress, chunks and results                no
member     also upload, start and retry OCR                            yes
owner      also manage membership (no API yet: done with the service)  yes
=========  ==========================================================  ======

The same rule is in SQL (``ocr_can_write``), for users who reach the tables
through PostgREST with their own JWT.
"""

from __future__ import annotations

from enum import StrEnum


class MatterRole(StrEnum):
    OWNER = "owner"
    MEMBER = "member"
    VIEWER = "viewer"

    @property
    def can_act(self) -> bool:
        """Upload, start and retry: what changes a matter's documents."""
        return self is not MatterRole.VIEWER

    @property
    def can_manage_members(self) -> bool:
        return self is MatterRole.OWNER
