"""What the rest of the service knows of each OCR engine without importing it.

An engine's module is imported only in the processes that run it (the Vision
client and gRPC are heavy, and optional), so what the planner and the command
line need is declared here, once per engine: its name and how many pages it
takes in one request. app.engines.registry builds the engines these name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class EngineSpec:
    name: str
    pages_per_request: int = 1  # chunks are cut in multiples of this, so no request goes half-empty
    # Reads pages with tesseract: the document's language must be installed where it runs. The
    # others take the language as a hint (google-vision) or have no use for it (text-layer, null).
    tesseract_languages: bool = False
    # Takes a page's own text layer as is where it is real text: the planner reads those pages
    # itself (app.engines.text_pass), and no worker sees them.
    reads_text_layer: bool = False


ENGINE_SPECS: Mapping[str, EngineSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            EngineSpec("auto", tesseract_languages=True, reads_text_layer=True),
            EngineSpec("tesseract", tesseract_languages=True),
            EngineSpec("text-layer", reads_text_layer=True),
            EngineSpec("google-vision", pages_per_request=5),  # the synchronous files API's limit
            EngineSpec("null"),
        )
    }
)


def engine_spec(name: str) -> EngineSpec:
    """The engine's spec; an unknown name is one page a request (the services refuse unknown
    engines before anything is planned)."""
    return ENGINE_SPECS.get(name) or EngineSpec(name)
