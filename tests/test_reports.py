import struct

import polars as pl

from worldforge.reports import informative_share_png, mask_statistics_png


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_plots_render_to_png():
    turns = pl.DataFrame({
        "domain": ["search", "search", "swe", "tool"], "source": ["fireact", "fireact", "swe-agent", "tau-bench"],
        "obs_tokens": [5, 0, 120, 40], "compression_ratio": [1.2, 0.0, 0.5, 0.6], "novelty": [1.0, 0.0, 0.7, 0.2],
        "line_surprisal": [10.0, 0.0, 9.0, 3.0], "informative": [True, False, True, False],
    })
    w, h = png_size(mask_statistics_png(turns))
    assert w > 2 * h > 200
    w2, h2 = png_size(informative_share_png(turns))
    assert w2 > 300 and h2 > 150
