"""``deployspec show``: a trace drawn as a table, a timeline (svg, html) or ITF."""

from __future__ import annotations

import json
import sys

from deployspec.models import UsageError
from deployspec.outputs import json_named, output_path, write_output
from deployspec.text import escaped, first_few


def cmd_show(args) -> int:
    from deployspec import traces
    from deployspec.render_text import divergence, render

    args.file = _one_trace(args.file)
    args.format = _show_format(args.format, args.out)
    out = None if args.out is None else _output_of_show(args.out, args.file)  # before the work, as for --out
    trace = traces.load_named(args.file, "show", drawing=True)  # (- is standard input, as -o's - is standard output)
    source = None if args.file == "-" else str(args.file)
    if args.format == "svg":
        from deployspec.render_svg import render as render_svg

        text = render_svg(trace)
    elif args.format == "html":
        from deployspec.render_html import render as render_html

        text = render_html(trace, source=source)
    elif args.format == "itf":
        from deployspec.render_itf import render as render_itf

        text = json.dumps(render_itf(trace, source=source), indent=1) + "\n"
    else:
        text = render(trace) + "\n" + divergence(trace)
    if args.format == "text":  # a trace's texts are anyone's: no terminal escapes reach the screen
        text = escaped(text, keep="\n")
    if out is not None:
        if write_output(out, text, "-o", args.out):
            _say_written(args.out, args.format, text)
    else:
        sys.stdout.write(text)
    return 0


def _say_written(named: str, kind: str, text: str) -> None:
    """``show -o FILE`` says what it wrote into a file, on stderr (its stdout may be
    closed): it said nothing, and a user whose name went elsewhere than meant (a typo)
    could not tell."""
    if sys.stderr is None:
        return
    size = len(text.encode("utf-8", "replace"))
    named = escaped(named)
    print(f"deployspec: wrote {named} ({kind}, {size / 1024:.0f} KiB)" if size >= 1024 else
          f"deployspec: wrote {named} ({kind}, {size} bytes)", file=sys.stderr)


#: names of pictures ``show`` does not draw (without --format, it wrote its text table there)
IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".pdf", ".webp", ".bmp", ".tif", ".tiff", ".svgz")
#: names of data a program would read (without --format, the text table went there too)
DATA = (".jsonl", ".ndjson", ".xml", ".yaml", ".yml", ".csv", ".tla", ".qnt")
#: what ``show -o NAME`` draws when --format is not given, by how NAME ends
FORMAT_OF_SUFFIX = {".svg": "svg", ".html": "html", ".htm": "html", ".itf.json": "itf", ".itf": "itf"}


def _one_trace(files: list[str]) -> str:
    """The trace ``show`` draws: one (a glob matching several said "unrecognized arguments")."""
    if len(files) > 1:
        raise UsageError(f"show draws one trace, got {len(files)} ({first_few(files, 3)}); "
                         "draw each in turn, or replay them all: deployspec replay FILE...")
    return files[0]


def _show_format(given: str | None, out: str | None) -> str:
    """``--format``, else the one ``-o``'s name asks for (``trace.svg``: a picture, not a
    table in a file a browser cannot show); a name asking for another is refused."""
    named = (out or "").lower()
    implied = next((f for suffix, f in FORMAT_OF_SUFFIX.items() if named.endswith(suffix)), None)
    if given is None and named.endswith(IMAGES):  # it wrote the text table into x.png
        raise UsageError(f"-o {out}: show draws svg, html, itf or text; name it .svg (or give --format)")
    if given is None and named.endswith(DATA):  # and into x.jsonl
        raise UsageError(f"-o {out}: show writes svg, html, itf (Apalache/Quint's trace format) or text; "
                         "name it .itf.json, .svg, .html or .txt (or give --format)")
    if given is not None and implied is not None and implied != given:
        raise UsageError(f"-o {out}: a name for {implied}, not --format {given}")
    return given or implied or "text"


def _output_of_show(named: str, source: str):
    """The file ``-o`` names, refused before the trace is read and drawn (a 64 MiB trace
    took seconds before ``-o`` was found to name no folder)."""
    path = output_path(named, "-o", empty="give a file name, or leave -o out to write to stdout")
    try:
        if path.exists() and path.samefile(source):
            raise UsageError(f"-o {named}: is the trace being shown; write the picture elsewhere")
    except OSError:  # (the trace's own name is said when it is read)
        pass
    why = json_named(path, named, also=(".itf.json",))  # as --junit's
    if why is not None:
        raise UsageError(f"-o {named}: {why} would be read as a trace by a replay of its folder; "
                         "name it .itf.json (itf), .svg, .html or .txt")
    return path
