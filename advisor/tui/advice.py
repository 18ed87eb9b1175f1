"""The current recommendation in the side panel: the layout, its figures with numbered footnotes,
warnings, and the alternatives with why not.

The panel renders a recommendation once, into lines, when it changes (a RichLog of fixed height
that scrolls itself): laying out the screen then needs no measuring of the advice, and a frame
draws only the lines in view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import RichLog

from advisor.chat.strings import t

if TYPE_CHECKING:
    from advisor.core.records import Recommendation
    from advisor.kb.knowledge import Citation, Knowledge


class AdvicePanel(RichLog):
    """The recommendation with its figures."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=20, **kwargs)  # type: ignore[arg-type]

    def _replace(self, renderable: Text | Group) -> None:
        self.clear()
        self.write(renderable, expand=True)
        self.scroll_home(animate=False, immediate=True)

    def show(self, rec: Recommendation | None, notes: list[Citation], kb: Knowledge | None, lang: str) -> None:
        """Show this recommendation; footnote numbers follow `notes`."""
        if rec is None or kb is None:
            self._replace(Text(t("no_rec", lang), style="italic"))
            return
        from advisor.chat.replies import serious
        from advisor.i18n import label, number
        from advisor.render.common import Footnotes, figure_cite, headline, lead_finding

        numbered = Footnotes(kb, list(notes))
        parts: list[object] = [Text(headline(rec), style="bold")]
        lead = lead_finding(rec)
        if lead is not None:
            parts.append(Text(lead.explanation, style="italic"))
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(ratio=1)
        table.add_column(justify="right", no_wrap=True)
        table.add_column(no_wrap=True, style="dim")
        from advisor.render.common import FIGURE_ORDER

        for key in FIGURE_ORDER:
            tr = rec.traces.get(key)
            if tr is None or tr.value is None:
                continue
            table.add_row(
                label("conversations_figure" if key == "conversations" else key, lang),
                number(tr.value, tr.unit, lang),
                numbered.ref(figure_cite(tr)),
            )
        parts += [Text(""), table]
        warn = serious(rec)
        if warn:
            parts.append(Text(""))
            for f in warn:
                parts.append(Text(f"⚠ {f.title}", style="bold #ffaf00"))
        if rec.alternatives:
            parts.append(Text(""))
            parts.append(Text(t("alternatives", lang), style="bold"))
            for a in rec.alternatives[:6]:
                parts.append(Text(f"{a.layout.label()}: {'; '.join(a.why_not)}", style="dim"))
        self._replace(Group(*parts))  # type: ignore[arg-type]
