"""The console's dialogs, one implementation each: a question (ConfirmScreen),
a message (MessageScreen), and the review and apply of a config change
(review_and_apply: the diff and `keel apply --dry-run`'s plan, then apply
with confirm and a visible countdown; no answer: keel's own watcher rolls
back). The settings, the setup wizard and the port forwards all apply
through review_and_apply."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from keel.apply.rates import CONFIRM_SECONDS
from keel.state.revisions import RevisionStore
from keel.ui.config_actions import ConfigActions
from keel.ui.fmt import countdown_bar, last_line
from keel.ui.settings_model import diff
from keel.ui.widgets.footer import Footer
from keel.ui.widgets.lines import LinesPanel

# how a review's countdown ended: the first of review_and_apply's result
KEPT, ROLLED_BACK, NO_ANSWER, NOT_ROLLED_BACK = (
    "kept", "rolled back", "rolled back (no answer)", "not rolled back")
Reviewed = Callable[[tuple[str, str] | None], None]


class ConfirmScreen(ModalScreen[bool]):
    """A question: [y] dismisses True, [n] or [esc] False."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "answer(True)", "yes"), Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield Static(f"{self.question}\n\n[y] yes   [n] no", id="dialog", markup=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class MessageScreen(ModalScreen[None]):
    """A message, closed by [enter] (or [esc], [space], [q])."""

    BINDINGS: ClassVar[list[Binding]] = [Binding("escape,enter,space,q", "close", "close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(f"{self.text}\n\n[enter] close", id="dialog", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)


# --- review and apply -----------------------------------------------------------

def review_and_apply(app: App, old_text: str, new_text: str, actions: ConfigActions,
                     revisions: RevisionStore, confirm_s: float, done: Reviewed) -> None:
    """Review the change from `old_text` to `new_text` and apply it with
    confirm: `done` gets (outcome, what to say) once the countdown is
    answered (outcome KEPT, ROLLED_BACK, NO_ANSWER or NOT_ROLLED_BACK), or
    None when the review is left ([esc])."""
    app.push_screen(ReviewScreen(old_text, new_text, actions, confirm_s,
                                 revisions.current_number(), id="review-screen"), done)


class ReviewScreen(Screen[tuple[str, str] | None]):
    """The diff of the config and `keel apply --dry-run`'s plan of the
    proposed file; [y] applies it with confirm. Dismisses with (outcome,
    what to say) once the countdown is answered, or None ([esc])."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "apply", "apply with confirm"),
        Binding("escape", "back", "back"),
    ]
    CSS = """
    ReviewScreen #review-body { height: 1fr; scrollbar-size: 0 0; }
    """

    def __init__(self, old_text: str, new_text: str, actions: ConfigActions,
                 confirm_s: float = CONFIRM_SECONDS, previous: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.old_text, self.new_text = old_text, new_text
        self.actions, self.confirm_s, self.previous = actions, confirm_s, previous
        self.state = "planning"  # -> ready | failed -> applying -> applied
        self.path: Path | None = None
        self.keys = (f"[y] apply with confirm ({round(confirm_s)} s to keep it)  "
                     "[up][down] scroll  [esc] back")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="review-body"):
            yield LinesPanel(id="review-diff")
            yield LinesPanel(id="review-plan")
        yield Footer(self.keys, id="footer")

    def on_mount(self) -> None:
        changes = diff(self.old_text, self.new_text)
        lines = [Text(f"REVIEW  the config: {len(changes)} changed line"
                      f"{'' if len(changes) == 1 else 's'}", style="bold")]
        lines += [Text("  " + line, style="red" if line.startswith("-") else "green")
                  for line in changes]
        self.query_one("#review-diff", LinesPanel).set_lines(lines)
        self._plan_lines([Text("  running keel apply --dry-run ...", style="dim")])
        self.query_one("#review-body").focus()
        self._plan()

    def _plan_lines(self, lines: list[Text]) -> None:
        head = Text("PLAN  what changes on the system (keel apply --dry-run)", style="bold")
        self.query_one("#review-plan", LinesPanel).set_lines([Text(""), head, *lines])

    @work(thread=True, exclusive=True, group="review", exit_on_error=False)
    def _plan(self) -> None:
        try:
            path = self.actions.propose(self.new_text)
        except OSError as err:
            self.app.call_from_thread(self._planned, None, False,
                                      f"cannot write {self.actions.proposed}: "
                                      f"{err.strerror or err}")
            return
        ok, said = self.actions.dry_run(path)
        self.app.call_from_thread(self._planned, path, ok, said)

    def _planned(self, path: Path | None, ok: bool, said: str) -> None:
        if not self.is_attached:
            return
        self.path = path
        self.state = "ready" if ok else "failed"
        style = "" if ok else "bold red"
        lines = [Text("  " + line, style=style) for line in said.splitlines()]
        if not ok:
            lines.append(Text("  the dry run failed: nothing can be applied", style="bold"))
        self._plan_lines(lines)

    def action_apply(self) -> None:
        footer = self.query_one(Footer)
        if self.state == "planning":
            footer.say("wait for the plan (keel apply --dry-run)")
            return
        if self.state == "failed" or self.path is None:
            footer.say("not applied: the dry run failed")
            return
        if self.state != "ready":
            return
        self.state = "applying"
        footer.say(f"applying with confirm ({round(self.confirm_s)} s) ...", 600)
        self._apply(self.path)

    @work(thread=True, exclusive=True, group="review", exit_on_error=False)
    def _apply(self, path: Path) -> None:
        ok, said = self.actions.apply_confirm(path, self.confirm_s)
        self.app.call_from_thread(self._applied, ok, said)

    def _applied(self, ok: bool, said: str) -> None:
        if not self.is_attached:
            return
        if not ok:
            self.state = "ready"
            self.query_one(Footer).say(f"not applied: {last_line(said)}", 30)
            return
        self.state = "applied"
        self.app.push_screen(CountdownScreen(self.actions, self.confirm_s, self.previous,
                                             said, id="countdown-screen"), self.dismiss)

    def action_back(self) -> None:
        if self.state in ("applying", "applied"):
            self.query_one(Footer).say("applying: answer the question first")
            return
        self.dismiss(None)


class CountdownScreen(ModalScreen[tuple[str, str]]):
    """'Keep these settings?' with the time left. [y] keeps them (`keel
    confirm`), [n] rolls back at once; no answer: keel apply --confirm's own
    watcher rolls back, and the screen says so. Dismisses with (outcome, what
    to say) on [enter] once answered."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "keep", "keep"),
        Binding("n", "reject", "roll back"),
        Binding("enter,escape", "close", "close"),
    ]
    CSS = """
    CountdownScreen #countdown-title { text-style: bold; }
    """

    def __init__(self, actions: ConfigActions, seconds: float = CONFIRM_SECONDS,
                 previous: int | None = None, applied: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.actions, self.seconds, self.previous = actions, seconds, previous
        self.applied = applied
        self.state = "asking"  # -> answering -> done
        self.outcome: tuple[str, str] = (NO_ANSWER, "")
        self.deadline = 0.0
        self._timer: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("KEEP THESE SETTINGS?", id="countdown-title", markup=False)
            yield Static(last_line(self.applied) or "applied", id="countdown-applied",
                         markup=False)
            yield Static("", id="countdown-bar", markup=False)
            yield Static("", id="countdown-said", markup=False)
            yield Static("[y] keep  [n] roll back now", id="countdown-keys", markup=False)

    def on_mount(self) -> None:
        self.deadline = time.monotonic() + self.seconds
        self._timer = self.set_interval(0.25, self._tick)
        self._tick()

    def _back_to(self) -> str:
        return f"revision {self.previous}" if self.previous is not None else \
            "the revision before"

    def _tick(self) -> None:
        if self.state != "asking":
            return
        remaining = self.deadline - time.monotonic()
        self.query_one("#countdown-bar", Static).update(
            countdown_bar(remaining, self.seconds))
        if remaining > 0:
            self.query_one("#countdown-said", Static).update(
                f"no answer: rolls back to {self._back_to()} by itself")
            return
        self._done(NO_ANSWER, f"{NO_ANSWER}: keel put {self._back_to()} back")

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _done(self, outcome: str, said: str) -> None:
        self._stop()
        self.state = "done"
        self.outcome = (outcome, said)
        self.query_one("#countdown-said", Static).update(said)
        self.query_one("#countdown-keys", Static).update("[enter] close")

    def action_keep(self) -> None:
        if self.state != "asking":
            return
        self.state = "answering"
        self._stop()
        self.query_one("#countdown-said", Static).update("keeping ...")
        self._keep()

    @work(thread=True, exclusive=True, group="countdown", exit_on_error=False)
    def _keep(self) -> None:
        ok, said = self.actions.confirm()
        if not ok:
            result = (NOT_ROLLED_BACK, f"keel confirm failed: {last_line(said)}")
        elif "nothing to confirm" in said:
            result = (NO_ANSWER, "too late: keel had rolled back already")
        else:
            result = (KEPT, "kept: these settings stay")
        self.app.call_from_thread(self._done, *result)

    def action_reject(self) -> None:
        if self.state != "asking":
            return
        self.state = "answering"
        self._stop()
        self.query_one("#countdown-said", Static).update(f"rolling back to {self._back_to()}"
                                                         " ...")
        self._reject()

    @work(thread=True, exclusive=True, group="countdown", exit_on_error=False)
    def _reject(self) -> None:
        ok, said = self.actions.rollback(self.previous)
        if ok:
            self.actions.confirm()  # the rollback is done: stop the watcher's own
            result = (ROLLED_BACK, f"rolled back to {self._back_to()}")
        else:  # the watcher still rolls back at the deadline
            result = (NOT_ROLLED_BACK, f"rollback failed: {last_line(said)} (keel still rolls "
                                       "back by itself when the time is up)")
        self.app.call_from_thread(self._done, *result)

    def action_close(self) -> None:
        if self.state == "done":
            self.dismiss(self.outcome)
