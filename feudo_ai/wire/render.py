"""RenderPosition: a picture of a position as one seat sees it (``engine.render.position_svg``), for front-ends.

The position arrives in any of the three forms and is first reduced to the asking seat's observation
(:func:`feudo_ai.wire.convert.observed_position`): a full state is projected before anything reads it, so the
picture is a function of the seat's observation alone and can never show another seat's unrevealed cards (R22).
To load that observation as an engine position, the picks hidden from the seat are filled with placeholders
chosen from the observation itself (:func:`feudo_ai.sampler.placeholder_fields`; a position whose player to act
is another seat needs them); the renderer draws no unrevealed pick but the seat's own.
"""

from __future__ import annotations

import math
import re

from engine.errors import StateError
from engine.render import position_svg, svg_to_png
from engine.serialize import state_from_dict
from feudo.v1 import advisor_pb2 as apb

from feudo_ai.search import ObservedPosition
from ..sampler import placeholder_fields
from .convert import PositionError

__all__ = ["MAX_PNG_SCALE", "render_observed", "render_position"]

MAX_PNG_SCALE = 2.0  # a PNG at scale 2 is a few hundred kB, well under the server's message cap
_SIZE = re.compile(r'<svg[^>]* width="(\d+)" height="(\d+)"')


def render_observed(observed: ObservedPosition, public_view: bool = False) -> str:
    """The SVG picture of a seat's view (``public_view``: without the seat's own selection either).

    :raises PositionError: the observation does not load as a position."""
    try:
        view = state_from_dict(observed.game, placeholder_fields(observed.game, dict(observed.observation)))
    except StateError as e:
        raise PositionError(f"position: {e}") from None
    return position_svg(view, seat=None if public_view else observed.seat)


def render_position(request: apb.RenderPositionRequest, observed: ObservedPosition) -> apb.RenderPositionResponse:
    """The RenderPosition answer for ``request`` whose position is ``observed`` (already validated).

    :raises PositionError: a bad ``png_scale`` (the field is named).
    :raises ImportError: a PNG is asked and cairosvg is not installed on the server."""
    scale = request.png_scale or 1.0
    if not math.isfinite(scale) or not 0 < scale <= MAX_PNG_SCALE:
        raise PositionError(f"png_scale: expected a number in (0, {MAX_PNG_SCALE:g}], got {request.png_scale}")
    svg = render_observed(observed, request.public_view)
    m = _SIZE.search(svg)
    out = apb.RenderPositionResponse(svg=svg, width=int(m.group(1)) if m else 0, height=int(m.group(2)) if m else 0)
    if request.png:
        out.png = svg_to_png(svg, scale=scale)
    return out
